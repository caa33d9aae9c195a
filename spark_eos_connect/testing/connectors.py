"""Source connectors made for tests: partitions that move between tasks, failures on request,
and connector-defined transactions of chosen sizes. Named by dotted path in options
(`spark_eos_connect.testing.CounterSourceConnector`), never imported by production code.
"""

from __future__ import annotations

import threading
from pathlib import Path

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    RecordMetadata,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from spark_eos_connect.connectors.generator import GeneratorSourceConnector
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords, ConvertingSourceTask

FAULTS_DIR_CONFIG = "faults.dir"


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
    `fail-on-start`: `start` raises; `fail-exactly-once-support` and
    `fail-transaction-boundaries`: the preflight questions raise. Every start and stop appends a
    line to `lifecycle.log`.
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

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        """The Generator's answer, or a KeyError if `fail-exactly-once-support` exists."""
        if (Path(config[FAULTS_DIR_CONFIG]) / "fail-exactly-once-support").exists():
            raise KeyError("fail-exactly-once-support: no credentials to ask the source")
        return super().exactly_once_support(config)

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """The Generator's answer, or a KeyError if `fail-transaction-boundaries` exists."""
        if (Path(config[FAULTS_DIR_CONFIG]) / "fail-transaction-boundaries").exists():
            raise KeyError("fail-transaction-boundaries: no credentials to ask the source")
        return super().can_define_transaction_boundaries(config)

    def _watch(self) -> None:
        switch = self._faults / "raise-error"
        while not self._halt.wait(0.05):
            if switch.exists():
                switch.unlink()
                self.context.raise_error(RuntimeError("raise-error: the connector lost its source"))

    def _log(self, event: str) -> None:
        with (self._faults / "lifecycle.log").open("a") as log:
            log.write(event + "\n")


# -- a source connector that defines its own transactions ------------------------------------


def fibonacci_transactions(total: int) -> list[tuple[int, int, bool]]:
    """`(first, size, committed)` of transactions sized 1, 1, 2, 3, 5, 8, ... covering
    `total` records (the last one cut short if needed); even-sized ones are aborted."""
    plan: list[tuple[int, int, bool]] = []
    first, a, b = 0, 1, 1
    while first < total:
        size = min(a, total - first)
        plan.append((first, size, size % 2 == 1))
        first, a, b = first + size, b, a + b
    return plan


def _scripted_config() -> ConfigDef:
    return (
        ConfigDef()
        .define("topic", ConfigType.STRING, importance="high", doc="Topic to write to.")
        .define("records.total", ConfigType.INT, 100, Range.at_least(0), "high", "Records.")
        .define(
            "records.per.poll",
            ConfigType.INT,
            7,
            Range.at_least(0),
            "medium",
            "Records per poll; 0 = one whole transaction per poll, ended by a batch-level "
            "request (commit_transaction()/abort_transaction() without a record).",
        )
        .define("log.dir", ConfigType.STRING, "", importance="low", doc="polled.log, acks.log.")
    )


class ScriptedTransactionsConnector(SourceConnector):
    """One task emitting `"n"` for n = 0, 1, ... in transactions of Fibonacci sizes that it
    commits (odd sizes) or aborts (even sizes) itself; logs every polled value and every
    `commit_record` call to `log.dir`, so tests can tell what was polled and acknowledged."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return "1"

    def config_def(self) -> ConfigDef:
        return _scripted_config()

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        self._props = {}

    def task_class(self) -> type[SourceTask]:
        return ScriptedTransactionsTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class ScriptedTransactionsTask(SourceTask):
    """See `ScriptedTransactionsConnector`."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        values = _scripted_config().parse(props)
        self.topic = values["topic"]
        self.per_poll = values["records.per.poll"]
        self.transactions = fibonacci_transactions(values["records.total"])
        self.ends = {first + size - 1: committed for first, size, committed in self.transactions}
        self.logs = Path(values["log.dir"]) if values["log.dir"] else None
        offset = self.context.offset_storage_reader.offset({"script": "fibonacci"})
        self.position = int(offset["position"]) if offset else 0

    def poll(self) -> list[SourceRecord] | None:
        total = sum(size for _, size, _ in self.transactions)
        if self.position >= total:
            return None
        if self.per_poll:
            count = min(self.per_poll, total - self.position)
        else:
            count = next(
                first + size - self.position
                for first, size, _ in self.transactions
                if first + size > self.position
            )
        records = [
            SourceRecord({"script": "fibonacci"}, {"position": n + 1}, self.topic, str(n))
            for n in range(self.position, self.position + count)
        ]
        self.position += count
        context = self.context.transaction_context
        assert context is not None, "needs transaction.boundary=connector"
        for record in records:
            committed = self.ends.get(int(str(record.value)))
            if committed is None:
                continue
            if not self.per_poll:
                context.commit_transaction() if committed else context.abort_transaction()
            elif committed:
                context.commit_transaction(record)
            else:
                context.abort_transaction(record)
        self._log("polled.log", "".join(f"{r.value!s}\n" for r in records))
        return records

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert metadata is not None
        value = record.value
        assert isinstance(value, str)
        line = f"{value} {metadata.topic} {metadata.partition} {metadata.offset}\n"
        self._log("acks.log", line)

    def _log(self, name: str, text: str) -> None:
        if self.logs is not None:
            with (self.logs / name).open("a") as out:
                out.write(text)

    def stop(self) -> None:
        self._log("lifecycle.log", "stop\n")


class ChunkedPollsTask(ConvertingSourceTask):
    """Records handed over converted, as the JVM task host hands over a Java task's: polls of
    `records.per.poll` numbered records (`records.total` in all), at most the asked number per
    batch; a batch that stops inside a poll says so, and `rest_of_poll` takes only the rest of
    that poll. Every record of a poll carries the poll's offset, as Debezium's records of one
    change share theirs: committing part of a poll would record all of it as done."""

    def version(self) -> str:
        """A test task's version."""
        return "test"

    def start(self, props: dict[str, str]) -> None:
        """`topic`, `records.total`, `records.per.poll`."""
        self._topic = props["topic"]
        self._total = int(props["records.total"])
        self._per_poll = int(props["records.per.poll"])
        self._next = 0
        self._left: list[int] = []
        self._seq = 0

    def poll(self) -> list[SourceRecord] | None:
        """Not used: the task loop asks a converting task for `poll_converted`."""
        raise NotImplementedError("polled with poll_converted")

    def poll_converted(
        self, limit: int, wait_s: float, rest_of_poll: bool = False
    ) -> ConvertedRecords:
        """The next batch: the rest of the current poll first, else a new poll's records."""
        if not self._left and not rest_of_poll and self._next < self._total:
            end = min(self._next + self._per_poll, self._total)
            self._left, self._next = list(range(self._next, end)), end
        taken, self._left = self._left[:limit], self._left[limit:]
        batch = ConvertedRecords(
            first_seq=self._seq,
            taken=len(taken),
            topics=[self._topic] * len(taken),
            keys=[None] * len(taken),
            values=[str(n).encode() for n in taken],
            offsets=[({"chunked": 0}, {"poll.end": self._next})] if taken else [],
            ends_poll=not self._left,
        )
        self._seq += len(taken)
        return batch

    def stop(self) -> None:
        """Nothing to release."""
