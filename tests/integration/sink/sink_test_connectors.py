"""Sink connectors used by the sink tests; shipped to Spark's Python workers with addPyFile."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition

CONFIG = (
    ConfigDef()
    .define("topics", ConfigType.LIST, None)
    .define("log.file", ConfigType.STRING, None)
    .define("fail.on", ConfigType.STRING, None)
)


class PartialCommitSinkTask(SinkTask):
    """Logs its calls to `log.file`; `pre_commit` returns only partition 0, two offsets back."""

    def start(self, props: dict[str, str]) -> None:
        config = CONFIG.parse(props)
        self.log = Path(config["log.file"])
        self.fail_on = config["fail.on"]

    def _log(self, *entry: object) -> None:
        with self.log.open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("open", sorted(p.partition for p in partitions))

    def put(self, records: list[SinkRecord]) -> None:
        for record in records:
            if self.fail_on is not None and record.value == self.fail_on.encode():
                raise RuntimeError(f"cannot store {record.value!r}")
        self._log("put", [[r.kafka_partition, r.kafka_offset] for r in records])

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        self._log("pre_commit", sorted((tp.partition, o) for tp, o in current_offsets.items()))
        return {tp: offset - 2 for tp, offset in current_offsets.items() if tp.partition == 0}

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("close", sorted(p.partition for p in partitions))

    def stop(self) -> None:
        self._log("stop")


class PartialCommitSinkConnector(SinkConnector):
    """One `PartialCommitSinkTask` per `tasks.max`."""

    def config_def(self) -> ConfigDef:
        return CONFIG

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return PartialCommitSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]


class TopicFileSinkTask(SinkTask):
    """FileStreamSink-like: appends `topic<TAB>value` per record to `file` (shows routing)."""

    def start(self, props: dict[str, str]) -> None:
        self.file = Path(props["file"])

    def put(self, records: list[SinkRecord]) -> None:
        with self.file.open("a") as out:
            for record in records:
                value = record.value
                text = value.decode() if isinstance(value, bytes) else str(value)
                out.write(f"{record.topic}\t{text}\n")

    def stop(self) -> None:
        pass


class TopicFileSinkConnector(SinkConnector):
    """One `TopicFileSinkTask` per `tasks.max`."""

    def config_def(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topics", ConfigType.LIST, None)
            .define("file", ConfigType.STRING, None)
        )

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return TopicFileSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]


class TaskLogSinkTask(SinkTask):
    """Logs `[task.id, call, partitions]` for `start`, `open` and `put` to `log.file`."""

    def start(self, props: dict[str, str]) -> None:
        self.log = Path(props["log.file"])
        self.id = props["task.id"]
        self._log("start", [])

    def _log(self, call: str, partitions: Iterable[int]) -> None:
        with self.log.open("a") as out:
            out.write(json.dumps([self.id, call, sorted(partitions)]) + "\n")

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("open", [p.partition for p in partitions])

    def put(self, records: list[SinkRecord]) -> None:
        self._log("put", {r.kafka_partition for r in records})

    def stop(self) -> None:
        pass


class TaskLogSinkConnector(SinkConnector):
    """`tasks.max` configs, each with its `task.id`."""

    def config_def(self) -> ConfigDef:
        return CONFIG

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return TaskLogSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.id": str(i)} for i in range(max_tasks)]


LIVE_CONFIG = (
    ConfigDef()
    .define("topics", ConfigType.LIST, None)
    .define("file", ConfigType.STRING, None)
    .define("log.file", ConfigType.STRING, None)
    .define("chunk.size", ConfigType.INT, 7)
    .define("put.delay.ms", ConfigType.INT, 0)
)


class _LoggingTask(SinkTask):
    """Appends `[task, call]` lines to `log.file` for `start`, `open`, `close` and `stop`."""

    def start(self, props: dict[str, str]) -> None:
        config = LIVE_CONFIG.parse(props)
        self.file = Path(config["file"])
        self.log = Path(config["log.file"]) if config["log.file"] else None
        self.chunk = int(config["chunk.size"])
        self.delay_s = int(config["put.delay.ms"]) / 1000
        self.task_marker = props.get("task.id", "?")
        self._log("start")

    def _log(self, call: str) -> None:
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(json.dumps([self.task_marker, call]) + "\n")

    def stop(self) -> None:
        self._log("stop")


class ChunkSinkTask(_LoggingTask):
    """A buffering sink: `put` only buffers; `pre_commit` appends complete chunks of
    `chunk.size` records of each partition to `file` (`partition offset value` lines) and
    returns the offset after the last record written; `close` drops what is still buffered."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self.buffered: dict[TopicPartition, list[tuple[int, str]]] = {}
        self.written: dict[TopicPartition, int] = {}

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("open")
        for tp in partitions:
            self.buffered[tp] = []

    def put(self, records: list[SinkRecord]) -> None:
        for record in records:
            value = record.value.decode() if isinstance(record.value, bytes) else record.value
            tp = TopicPartition(record.topic, record.kafka_partition)
            self.buffered[tp].append((record.kafka_offset, str(value)))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        lines = []
        for tp, buffered in self.buffered.items():
            whole = len(buffered) - len(buffered) % self.chunk
            if whole:
                lines += [f"{tp.partition} {offset} {value}" for offset, value in buffered[:whole]]
                self.written[tp] = buffered[whole - 1][0] + 1
                del buffered[:whole]
        if lines:
            with self.file.open("a") as out:
                out.write("".join(line + "\n" for line in lines))
        return {tp: offset for tp, offset in self.written.items() if tp in current_offsets}

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("close")
        for tp in partitions:
            self.buffered.pop(tp, None)


class OffsetsInOutputSinkTask(_LoggingTask):
    """Keeps its offsets in its output: appends `partition offset value` lines to `file` in
    `put`; on `open` reads the file and asks to continue after each partition's last line
    (`context.offset`), wherever the group or the checkpoint are; `pre_commit` returns the
    file's offsets."""

    def _file_offsets(self) -> dict[int, int]:
        offsets: dict[int, int] = {}
        if self.file.exists():
            for line in self.file.read_text().splitlines():
                partition, offset, _ = line.split(" ", 2)
                offsets[int(partition)] = int(offset) + 1
        return offsets

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("open")
        kept = self._file_offsets()
        for tp in partitions:
            self.context.offset(tp, kept.get(tp.partition, 0))

    def put(self, records: list[SinkRecord]) -> None:
        time.sleep(self.delay_s)
        lines = []
        for record in records:
            value = record.value.decode() if isinstance(record.value, bytes) else record.value
            lines.append(f"{record.kafka_partition} {record.kafka_offset} {value}\n")
        with self.file.open("a") as out:
            out.write("".join(lines))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        kept = self._file_offsets()
        return {tp: kept[tp.partition] for tp in current_offsets if tp.partition in kept}

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        self._log("close")


class _LiveConnector(SinkConnector):
    task: type[SinkTask]

    def config_def(self) -> ConfigDef:
        return LIVE_CONFIG

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.id": str(i)} for i in range(max_tasks)]


class ChunkSinkConnector(_LiveConnector):
    """`ChunkSinkTask`s."""

    task = ChunkSinkTask


class OffsetsInOutputSinkConnector(_LiveConnector):
    """`OffsetsInOutputSinkTask`s."""

    task = OffsetsInOutputSinkTask
