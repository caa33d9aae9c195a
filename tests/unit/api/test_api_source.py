"""Source API: records, offset readers, transaction context, task and connector defaults."""

from __future__ import annotations

import pytest

from spark_eos_connect.api import (
    ConfigDef,
    ConfigType,
    ConnectorTransactionBoundaries,
    InMemoryOffsetStorageReader,
    OffsetStorageReader,
    RecordMetadata,
    SourceConnector,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionBoundaryConflictError,
    TransactionContext,
)
from spark_eos_connect.errors import EosConnectError


def record(n: int) -> SourceRecord:
    return SourceRecord({"p": 0}, {"n": n}, "topic", f"v{n}")


def test_source_record_defaults_and_slots() -> None:
    rec = SourceRecord({"f": "a"}, {"position": 3}, "t", b"v")
    assert rec.key is None and rec.partition is None and rec.timestamp is None
    assert tuple(rec.headers) == ()
    assert not hasattr(rec, "__dict__")
    assert rec == SourceRecord({"f": "a"}, {"position": 3}, "t", b"v")


def test_in_memory_reader_matches_partitions_regardless_of_key_order() -> None:
    reader = InMemoryOffsetStorageReader([({"a": 1, "b": "x"}, {"position": 5})])
    assert isinstance(reader, OffsetStorageReader)
    assert reader.offset({"b": "x", "a": 1}) == {"position": 5}
    assert reader.offset({"a": 2}) is None
    reader.set({"a": 2}, {"position": 1})
    reader.set({"a": 1, "b": "x"}, None)
    assert reader.offsets([{"a": 1, "b": "x"}, {"a": 2}]) == [
        ({"a": 1, "b": "x"}, None),
        ({"a": 2}, {"position": 1}),
    ]


def test_in_memory_reader_returns_copies() -> None:
    reader = InMemoryOffsetStorageReader([({"a": 1}, {"position": 5})])
    found = reader.offset({"a": 1})
    assert found is not None
    found["position"] = 99
    assert reader.offset({"a": 1}) == {"position": 5}


def test_record_level_commit_applies_once_that_record_is_dispatched() -> None:
    context = TransactionContext()
    first, second = record(1), record(2)
    context.commit_transaction(second)
    assert context.has_pending_requests()
    assert not context.should_commit_on(first)
    assert not context.should_abort_on(second)
    assert context.should_commit_on(second)
    assert not context.should_commit_on(second)  # consumed
    assert not context.has_pending_requests()


def test_record_requests_match_by_identity_not_equality() -> None:
    context = TransactionContext()
    context.abort_transaction(record(1))
    assert not context.should_abort_on(record(1))


def test_batch_level_requests_apply_at_end_of_batch_and_are_consumed() -> None:
    context = TransactionContext()
    context.commit_transaction()
    assert not context.should_abort_batch()
    assert context.should_commit_batch()
    assert not context.should_commit_batch()
    context.abort_transaction()
    assert context.should_abort_batch()
    assert not context.has_pending_requests()


def test_commit_and_abort_of_same_record_fails_when_runtime_asks() -> None:
    context = TransactionContext()
    rec = record(1)
    context.commit_transaction(rec)
    context.abort_transaction(rec)
    with pytest.raises(TransactionBoundaryConflictError, match="both commit and abort"):
        context.should_commit_on(rec)
    with pytest.raises(TransactionBoundaryConflictError):
        context.should_abort_on(rec)


def test_commit_and_abort_of_same_batch_fails_when_runtime_asks() -> None:
    context = TransactionContext()
    context.commit_transaction()
    context.abort_transaction()
    with pytest.raises(TransactionBoundaryConflictError, match="both commit and abort"):
        context.should_commit_batch()
    with pytest.raises(TransactionBoundaryConflictError):
        context.should_abort_batch()


def test_source_task_context_exposes_configs_reader_and_transactions() -> None:
    reader = InMemoryOffsetStorageReader()
    transactions = TransactionContext()
    context = SourceTaskContext({"a": "1"}, reader, transactions, task_id=3, connector_name="c")
    configs = context.configs()
    configs["a"] = "2"
    assert context.configs() == {"a": "1"}
    assert context.offset_storage_reader is reader
    assert context.transaction_context is transactions
    assert (context.task_id, context.connector_name) == (3, "c")
    assert SourceTaskContext({}, reader).transaction_context is None


class _Task(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class _Connector(SourceConnector):
    def config_def(self) -> ConfigDef:
        return ConfigDef().define("n", ConfigType.INT, 1)

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SourceTask]:
        return _Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]


def test_source_task_needs_initialize_before_context() -> None:
    task = _Task()
    with pytest.raises(EosConnectError, match="not been initialized"):
        _ = task.context
    context = SourceTaskContext({}, InMemoryOffsetStorageReader())
    task.initialize(context)
    assert task.context is context
    assert task.version()
    task.commit()
    task.commit_record(record(1), RecordMetadata("t", 0, 10))
    task.commit_record(record(1), None)


def test_source_connector_defaults() -> None:
    connector = _Connector()
    assert connector.exactly_once_support({}) is None
    assert connector.can_define_transaction_boundaries({}) is (
        ConnectorTransactionBoundaries.UNSUPPORTED
    )
    assert connector.alter_offsets({}, [({"p": 1}, None)]) is False
    (report,) = connector.validate({"n": "x"})
    assert report.name == "n" and report.errors
    with pytest.raises(EosConnectError, match="not been initialized"):
        _ = connector.context


def test_connector_initialize_stores_context() -> None:
    class Context:
        def request_task_reconfiguration(self) -> None:
            pass

        def raise_error(self, error: BaseException) -> None:
            pass

    connector = _Connector()
    context = Context()
    connector.initialize(context)
    assert connector.context is context
