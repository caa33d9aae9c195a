"""A Java `SourceConnector` from `plugin.path`, as the driver's connector (driver side).

`java_source_connector_class(name, plugin_path)` makes the `SourceConnector` class the driver
runs for the Java class `name`: each call is answered by a JVM task host of the driver's own
(`client.shared_host`, not Spark's driver JVM, whose classpath would clash with the plugins'),
which keeps the Java connector between `start` and `stop`. Its tasks are `JavaSourceTask`s;
their configs carry Connect's `task.class`, as a Connect worker writes them. While it runs, a
watcher thread asks the JVM every `EVENTS_INTERVAL_S` whether the connector requested a task
reconfiguration or raised an error through its context, and passes them to this connector's
context (the driver's `ManagedConnector` acts on them). `alter_offsets` is the Java connector's
`alterOffsets` on a fresh instance, as a Connect worker calls it when offsets are altered or
reset. The connector's own offset reader (its `SourceConnectorContext`'s) answers from the
offsets its context's reader finds: those committed in Kafka, read again at each question.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from spark_eos_connect.api.config import ConfigDef, ConfigType, ConfigValueReport
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceConnectorContext,
)
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.jvm_tasks.client import TaskHostProcess, offset_answer, shared_host
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.java_source_task import (
    CONNECTOR_OPTIONS,
    PLUGIN_PATH,
    TASK_CLASS,
    JavaSourceTask,
)
from spark_eos_connect.jvm_tasks.wire import (
    ALTER_OFFSETS,
    CONNECTOR_EVENTS,
    EXACTLY_ONCE_SUPPORT,
    START_CONNECTOR,
    STOP_CONNECTOR,
    TASK_CONFIGS,
    TRANSACTION_BOUNDARIES,
    VALIDATE,
    FrameWriter,
)

log = logging.getLogger(__name__)

_HANDLES = itertools.count(1)
EVENTS_INTERVAL_S = 1.0
"""How often a running Java connector is asked for the events of its context."""


class JavaSourceConnector(SourceConnector):
    """The Java connector `java_class` from `plugin_path` (set on the subclass that
    `java_source_connector_class` makes)."""

    java_class: ClassVar[str] = ""
    plugin_path: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._handle: int | None = None
        self._java_task_class = ""
        self._defined: list[str] = []
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    def version(self) -> str:
        """The adapter's version."""
        return "java"

    def config_def(self) -> ConfigDef:
        """The options the Java connector defines, as `validate` found them (empty before):
        their checks are the Java connector's own."""
        config = ConfigDef()
        for name in self._defined:
            config = config.define(
                name, ConfigType.STRING, None, None, "medium", "(a Java plugin's option)"
            )
        return config

    def _host(self) -> TaskHostProcess:
        return shared_host(list(self.plugin_path))

    def _call(self, what: str, request: FrameWriter) -> Any:
        try:
            return self._host().call(request)
        except JavaPluginError as error:
            context = f"Java connector {self.java_class} (plugin.path {list(self.plugin_path)})"
            raise error.restated(f"{context} failed in {what}") from error

    @staticmethod
    def _strings(props: Mapping[str, Any]) -> dict[str, str]:
        return {k: str(v) for k, v in props.items() if v is not None}

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValueReport]:
        """The Java connector's `validate`: one report per option it defines."""
        reply = self._call(
            "validate", FrameWriter(VALIDATE).text(self.java_class).map(self._strings(props))
        )
        reports = []
        for _ in range(reply.i32()):
            name = reply.text() or ""
            errors = [reply.text() or "" for _ in range(reply.i32())]
            reports.append(ConfigValueReport(name, props.get(name), errors=errors))
        self._defined = [report.name for report in reports]
        return reports

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport | None:
        """The Java connector's `exactlyOnceSupport`."""
        request = FrameWriter(EXACTLY_ONCE_SUPPORT).text(self.java_class).map(self._strings(config))
        answer = self._call("exactlyOnceSupport", request).text()
        return None if answer is None else ExactlyOnceSupport(answer)

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """The Java connector's `canDefineTransactionBoundaries` (UNSUPPORTED when it answers
        null: only SUPPORTED allows `transaction.boundary=connector`, as in Connect)."""
        request = FrameWriter(TRANSACTION_BOUNDARIES).text(self.java_class)
        answer = self._call("canDefineTransactionBoundaries", request.map(self._strings(config)))
        text = answer.text()
        return (
            ConnectorTransactionBoundaries.UNSUPPORTED
            if text is None
            else (ConnectorTransactionBoundaries(text))
        )

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """The Java connector's `alterOffsets(config, offsets)` (ALTER_OFFSETS), on a fresh
        instance as a Connect worker calls it: partitions and offsets reach it with Connect's
        JSON types (an integer as a Long), a None offset (a reset) as null. Its `true` or
        `false` is returned; its refusal (any exception) is a `ConfigError` with its message,
        an `UnsupportedOperationException` a `NotImplementedError`. A task host that fails
        (rather than the connector) raises a RuntimeError: not the connector's answer."""
        request = FrameWriter(ALTER_OFFSETS).text(self.java_class).map(self._strings(config))
        request.i32(len(offsets))
        for partition, offset in offsets:
            request.text(_json(partition)).text(None if offset is None else _json(offset))
        try:
            reply = self._host().call(request)
        except JavaPluginError as error:
            first = str(error.args[0]).splitlines()[0]
            if not error.java_class:  # the JVM itself failed: not the connector's answer
                raise RuntimeError(
                    f"Java connector {self.java_class} (plugin.path {list(self.plugin_path)}): "
                    f"alterOffsets could not be called: {first}"
                ) from error
            log.info("Java connector %s refused the offsets:\n%s", self.java_class, error.trace)
            reason = first.removeprefix(f"{error.java_class}: ")
            if error.java_class == "java.lang.UnsupportedOperationException":
                raise NotImplementedError(f"{reason} ({error.java_class})") from error
            raise ConfigError(reason) from error
        return reply.i32() == 1

    def start(self, props: dict[str, str]) -> None:
        """Start the Java connector in the driver's task host; its context's offset reader
        answers from this connector's context (`SourceConnectorContext`)."""
        handle = next(_HANDLES)
        context = self._context
        if isinstance(context, SourceConnectorContext):
            answer = offset_answer(context.offset_storage_reader.offset)
            self._host().answer_connector(handle, answer)
        request = FrameWriter(START_CONNECTOR).i32(handle).text(self.java_class)
        try:
            reply = self._call("start", request.map(self._strings(props)))
        except BaseException:
            self._host().answer_connector(handle, None)
            raise
        self._handle, self._java_task_class = handle, reply.text() or ""
        self._stopping.clear()
        self._watcher = threading.Thread(
            target=self._watch, args=(handle,), name=f"watch-{self.java_class}", daemon=True
        )
        self._watcher.start()

    def _watch(self, handle: int) -> None:
        """Pass the connector's context events on until it stops."""
        while not self._stopping.wait(EVENTS_INTERVAL_S):
            try:
                self.poll_events(handle)
            except JavaPluginError as error:
                if not self._stopping.is_set():
                    log.warning(
                        "Java connector %s: reading its events failed: %s", self.java_class, error
                    )
                return

    def poll_events(self, handle: int) -> None:
        """Hand the events the Java connector raised since the last look to this connector's
        context: a task reconfiguration request, an error (with the Java trace)."""
        reply = self._host().call(FrameWriter(CONNECTOR_EVENTS).i32(handle))
        flags, trace = reply.i32(), reply.text()
        if flags & 1:
            self.context.request_task_reconfiguration()
        if trace is not None:
            self.context.raise_error(
                JavaPluginError(f"Java connector {self.java_class} raised an error", "", trace)
            )

    def task_class(self) -> type[JavaSourceTask]:
        """The Python front of the Java tasks."""
        return JavaSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """The Java connector's task configs, each with Connect's `task.class`."""
        if self._handle is None:
            raise JavaPluginError(f"Java connector {self.java_class} is not started")
        reply = self._call(
            "taskConfigs", FrameWriter(TASK_CONFIGS).i32(self._handle).i32(max_tasks)
        )
        return [{**reply.map(), TASK_CLASS: self._java_task_class} for _ in range(reply.i32())]

    def stop(self) -> None:
        """Stop the Java connector (and the watching of its events)."""
        handle, self._handle = self._handle, None
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.join(EVENTS_INTERVAL_S * 5)
            self._watcher = None
        if handle is not None:
            try:
                self._call("stop", FrameWriter(STOP_CONNECTOR).i32(handle))
            finally:
                self._host().answer_connector(handle, None)

    @classmethod
    def task_settings(cls, connector_options: Mapping[str, str]) -> dict[str, Any]:
        """What a task plan's `extra` carries to a `JavaSourceTask`: the `plugin.path` and
        the connector's options its JVM applies (converters, transforms, errors.*),
        config references unresolved."""
        return {PLUGIN_PATH: list(cls.plugin_path), CONNECTOR_OPTIONS: dict(connector_options)}


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


_CLASSES: dict[tuple[str, tuple[str, ...]], type[JavaSourceConnector]] = {}


def java_source_connector_class(
    java_class: str, plugin_path: list[str]
) -> type[JavaSourceConnector]:
    """The driver's connector class for the Java connector `java_class` in `plugin_path`."""
    key = (java_class, tuple(plugin_path))
    if key not in _CLASSES:
        name = f"JavaSourceConnector[{java_class.rpartition('.')[2]}]"
        _CLASSES[key] = type(
            name, (JavaSourceConnector,), {"java_class": java_class, "plugin_path": key[1]}
        )
    return _CLASSES[key]
