"""Helpers for testing pipelines and connectors against a real local broker.

`BrokerProcess` runs `eosconnect kafka` as a child process (exactly what a user runs) and can
restart it on the same port and data folder, or kill it, to inject broker failures.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range
from spark_eos_connect.api.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from spark_eos_connect.connectors.generator import GeneratorSourceConnector
from spark_eos_connect.errors import SetupError
from spark_eos_connect.kafka.broker import free_port

BOOTSTRAP_PREFIX = "bootstrap.servers="
FAULTS_DIR_CONFIG = "faults.dir"


class BrokerProcess:
    """`eosconnect kafka --port P --data-dir D` as a child process."""

    def __init__(self, data_dir: str | Path, port: int | None = None, timeout_s: float = 120.0):
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.timeout_s = timeout_s
        self._process: subprocess.Popen[str] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """Where clients reach the broker."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> BrokerProcess:
        """Start the broker and wait for its `bootstrap.servers=` line."""
        command = [
            sys.executable,
            "-m",
            "spark_eos_connect.cli",
            "kafka",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        ]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ
        )
        self._process = process
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                if process.poll() is not None:
                    break
                continue
            if line.startswith(BOOTSTRAP_PREFIX):
                announced = line[len(BOOTSTRAP_PREFIX) :].strip()
                if announced != self.bootstrap_servers:
                    raise SetupError(f"broker announced {announced}, expected {self}")
                return self
        stderr = process.stderr.read() if process.poll() is not None and process.stderr else ""
        self.kill()
        raise SetupError(f"`eosconnect kafka` did not announce itself in time: {stderr[-3000:]}")

    def stop(self, timeout_s: float = 60.0) -> int | None:
        """SIGTERM the broker and wait for a clean exit; returns the exit code."""
        process, self._process = self._process, None
        if process is None:
            return None
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def kill(self) -> None:
        """SIGKILL the command and its broker JVM, as a machine crash would."""
        process, self._process = self._process, None
        if process is None:
            return
        _kill_children(process.pid)
        process.kill()
        process.wait()

    def restart(self) -> BrokerProcess:
        """Stop cleanly and start again on the same port and data folder."""
        self.stop()
        return self.start()

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _kill_children(pid: int) -> None:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        child_pids = [int(p) for p in children.read_text().split()]
    except OSError:
        return
    for child in child_pids:
        _kill_children(child)
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)


# -- a source connector whose partitions move between tasks when tasks.max changes ------------


def _counter_config() -> ConfigDef:
    return (
        ConfigDef()
        .define("topic", ConfigType.STRING, importance="high", doc="Topic to write to.")
        .define("streams", ConfigType.INT, 4, Range.at_least(1), "high", "Source partitions.")
        .define(
            "records.per.stream",
            ConfigType.INT,
            1000,
            Range.at_least(0),
            "medium",
            "Records each stream holds; a stream is exhausted after that many.",
        )
        .define(
            "records.per.poll",
            ConfigType.INT,
            100,
            Range.at_least(1),
            "low",
            "Records one poll returns at most.",
        )
    )


class CounterSourceConnector(SourceConnector):
    """`streams` counters `{"stream": s}`, spread round-robin over the tasks; record n of stream
    s has the value `"s:n"`. Changing tasks.max moves streams between tasks, which is what
    reconfiguration tests need."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return "1"

    def config_def(self) -> ConfigDef:
        return _counter_config()

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        self._props = {}

    def task_class(self) -> type[SourceTask]:
        return CounterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        streams = int(self._props.get("streams", "4"))
        tasks = min(max_tasks, streams)
        return [
            {
                **self._props,
                "streams.assigned": ",".join(str(s) for s in range(streams) if s % tasks == t),
            }
            for t in range(tasks)
        ]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED


class CounterSourceTask(SourceTask):
    """Emits the next records of its streams, resuming from the committed positions."""

    def __init__(self) -> None:
        self.positions: dict[int, int] = {}

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        values = _counter_config().parse(props)
        self.topic = values["topic"]
        self.limit = values["records.per.stream"]
        self.per_poll = values["records.per.poll"]
        assigned = [int(s) for s in props["streams.assigned"].split(",") if s]
        reader = self.context.offset_storage_reader
        for stream in assigned:
            offset = reader.offset({"stream": stream})
            self.positions[stream] = int(offset["position"]) if offset else 0

    def poll(self) -> list[SourceRecord] | None:
        records: list[SourceRecord] = []
        for stream, position in self.positions.items():
            count = min(self.per_poll - len(records), self.limit - position)
            records += [
                SourceRecord({"stream": stream}, {"position": n + 1}, self.topic, f"{stream}:{n}")
                for n in range(position, position + max(count, 0))
            ]
            self.positions[stream] = position + max(count, 0)
        return records or None

    def stop(self) -> None:
        self.positions = {}


class FaultyGeneratorConnector(GeneratorSourceConnector):
    """The Generator, with connector-level failures switched on by files in `faults.dir`.

    `raise-error` present: a background thread reports it through `ConnectorContext.raise_error`
    (and removes the file: one failure per file); `fail-on-stop`: `stop` raises after stopping;
    `fail-on-start`: `start` raises. Every start and stop appends a line to `lifecycle.log`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._faults = Path()
        self._halt = threading.Event()
        self._watcher: threading.Thread | None = None

    def config_def(self) -> ConfigDef:
        """The Generator's options and `faults.dir`."""
        return ConfigDef(GeneratorSourceConnector().config_def().keys.values()).define(
            FAULTS_DIR_CONFIG, ConfigType.STRING, importance="high", doc="Fault switch folder."
        )

    def start(self, props: dict[str, str]) -> None:
        """Start the Generator and the watcher thread, or fail if `fail-on-start` exists."""
        self._faults = Path(props[FAULTS_DIR_CONFIG])
        self._log("start")
        if (self._faults / "fail-on-start").exists():
            raise RuntimeError("fail-on-start: the connector refuses to start")
        super().start({k: v for k, v in props.items() if k != FAULTS_DIR_CONFIG})
        self._halt.clear()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        """Stop the watcher; raise afterwards if `fail-on-stop` exists."""
        self._log("stop")
        self._halt.set()
        if self._watcher is not None:
            self._watcher.join()
        super().stop()
        if (self._faults / "fail-on-stop").exists():
            raise RuntimeError("fail-on-stop: the connector failed while stopping")

    def _watch(self) -> None:
        switch = self._faults / "raise-error"
        while not self._halt.wait(0.05):
            if switch.exists():
                switch.unlink()
                self.context.raise_error(RuntimeError("raise-error: the connector lost its source"))

    def _log(self, event: str) -> None:
        with (self._faults / "lifecycle.log").open("a") as log:
            log.write(event + "\n")


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
        time.sleep(0.2)
