"""`PostgresSink`: Kafka records into PostgreSQL tables, exactly once.

Each `put` is one PostgreSQL transaction holding the rows and the next offset of every partition
the records came from, in the sink's offsets table (`offsets.table.name`); `open` asks the runtime
to continue from those offsets (`context.offset`), and `pre_commit` returns what the table holds,
so the consumer group `connect-<name>` shows the lag. Options follow Confluent's JDBC sink
(`sink_config`). Tasks run on executors; the database client is imported when a task starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.connectors.postgres.sink.config import (
    CONFIG_DEF,
    PostgresSinkConfig,
    parse_sink_config,
)
from spark_eos_connect.errors import EosConnectError

if TYPE_CHECKING:
    from spark_eos_connect.connectors.postgres.sink.writer import PostgresWriter

__all__ = ["PostgresSinkConnector", "PostgresSinkTask"]


def _writer(config: PostgresSinkConfig) -> PostgresWriter:
    from spark_eos_connect.connectors.postgres.sink.writer import PostgresWriter

    return PostgresWriter(config)


class PostgresSinkConnector(SinkConnector):
    """Writes records to PostgreSQL exactly once; offsets are kept in the database."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def config_def(self) -> ConfigDef:
        """Confluent JDBC sink's options (`connection.url`, `insert.mode`, `pk.mode`, ...)."""
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options, the ones that must go together included."""
        parse_sink_config(props)
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_class(self) -> type[PostgresSinkTask]:
        """`PostgresSinkTask`."""
        return PostgresSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """`max_tasks` copies of the configuration: partitions are dealt to the tasks."""
        return [dict(self._props) for _ in range(max_tasks)]

    def alter_offsets(
        self, config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """Apply the new offsets to the offsets table too (a reset forgets the partition), so
        that the next `open` continues from them: True."""
        writer = _writer(parse_sink_config(config))
        try:
            writer.set_offsets(offsets)
        finally:
            writer.close()
        return True


class PostgresSinkTask(SinkTask):
    """Writes each `put` in one transaction with its offsets; see the module docstring."""

    def __init__(self) -> None:
        self._writer: PostgresWriter | None = None

    def start(self, props: dict[str, str]) -> None:
        """Parse the options and connect (creating the offsets table if needed)."""
        self._writer = _writer(parse_sink_config(props))
        self._writer.stored_offsets()

    def _started(self) -> PostgresWriter:
        if self._writer is None:
            raise EosConnectError("PostgresSinkTask is not started")
        return self._writer

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        """Continue each partition the offsets table knows from its stored next offset."""
        stored = self._started().stored_offsets()
        for tp in partitions:
            tp = TopicPartition(*tp)
            if tp in stored:
                self.context.offset(tp, stored[tp])

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write the records (those not written yet) and their offsets in one transaction."""
        if records:
            self._started().write(records)

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets the table holds, raised to `current_offsets` first (records consumed
        without a row: filtered, or failed under errors.tolerance=all), never beyond them."""
        stored = self._started().advance(current_offsets)
        return {tp: min(stored.get(tp, offset), offset) for tp, offset in current_offsets.items()}

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Nothing is kept per partition: every `put` is already committed."""

    def stop(self) -> None:
        """Close the connection."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
