"""Sink connectors used by the sink tests; shipped to Spark's Python workers with addPyFile."""

from __future__ import annotations

import json
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
