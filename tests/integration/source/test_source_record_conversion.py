"""Converters, transforms and `errors.*` of source connectors against the real broker, without
Spark: the live task produces what the chain and the converters make of its records, filtered
and skipped records still move the committed source offsets (and reach `commit_record` with no
metadata once the transaction commits), `errors.tolerance=none` fails the micro-batch naming the
stage, class and alias with nothing committed, and a Struct that does not match its schema never
reaches Kafka."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.api.source import (
    ExactlyOnceSupport,
    RecordMetadata,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value
from spark_eos_connect.runtime.errors_dlq import ToleranceExceededError
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import SourceCoordinator
from spark_eos_connect.source.task_loop import run_task_once

pytestmark = pytest.mark.integration

ORDER = SchemaBuilder.struct().name("order").field("id", Schema.INT32).field("item", Schema.STRING)
ORDER_SCHEMA = ORDER.build()
JSON = "org.apache.kafka.connect.json.JsonConverter"

SCRIPTS: dict[str, list[SourceRecord]] = {}
"""Records a scripted task emits, by its `script` option (the tasks run in this process)."""
COMMITTED: dict[str, list[tuple[int, RecordMetadata | None]]] = {}
"""`commit_record` calls of each script: (position, metadata)."""


class ScriptedTask(SourceTask):
    """Emits its script's records from the committed position on; logs `commit_record`."""

    def start(self, props: dict[str, str]) -> None:
        self.script = props["script"]
        offset = self.context.offset_storage_reader.offset({"script": self.script})
        self.next = 0 if offset is None else int(offset["position"]) + 1

    def poll(self) -> list[SourceRecord] | None:
        script = SCRIPTS[self.script]
        polled = [
            SourceRecord(
                {"script": self.script},
                {"position": n},
                record.topic,
                record.value,
                key=record.key,
                headers=record.headers,
                key_schema=record.key_schema,
                value_schema=record.value_schema,
            )
            for n, record in enumerate(script[self.next :], start=self.next)
        ]
        self.next = len(script)
        return polled or None

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert record.source_offset is not None
        COMMITTED.setdefault(self.script, []).append((record.source_offset["position"], metadata))

    def stop(self) -> None:
        pass


class ScriptedSource(SourceConnector):
    """One task running the records `SCRIPTS[script]` holds."""

    def config_def(self) -> ConfigDef:
        return ConfigDef().define("script", ConfigType.STRING, importance="high", doc="Script.")

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SourceTask]:
        return ScriptedTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED


@pytest.fixture
def scripted(
    bootstrap_servers: str, unique_name: Callable[[str], str]
) -> Callable[..., tuple[str, Callable[[], Any]]]:
    """`scripted(records, **options)`: (connector name, run one micro-batch of a fresh task)."""

    def make(records: list[SourceRecord], **options: str) -> tuple[str, Callable[[], Any]]:
        name = unique_name("scripted")
        SCRIPTS[name] = records
        config = parse_source_pipeline(
            {
                "name": name,
                "connector.class": f"{ScriptedSource.__module__}.ScriptedSource",
                "script": name,
                "kafka.bootstrap.servers": bootstrap_servers,
                **options,
            }
        )
        coordinator = SourceCoordinator.open(config)

        def run_batch() -> Any:
            [plan] = coordinator.plan()
            return run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

        return name, run_batch

    return make


def offsets_of(read_committed: Callable[..., list[Any]], name: str) -> list[Any]:
    """The connector's committed source offsets, in order."""
    found = []
    for record in read_committed("eosconnect-offsets"):
        connector, _ = decode_offset_key(record.key)
        if connector == name:
            found.append(decode_offset_value(record.value))
    return found


def order(topic: str, id_: int, item: str | None = "pen", **extra: Any) -> SourceRecord:
    value = Struct(ORDER_SCHEMA)
    value.put("id", id_)
    if item is not None:
        value.put("item", item)
    return SourceRecord(None, None, topic, value, value_schema=ORDER_SCHEMA, **extra)


def test_json_converter_writes_structs_keys_and_headers_with_connects_bytes(
    scripted: Callable[..., tuple[str, Callable[[], Any]]],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("orders")
    records = [order(topic, 1, key="o-1", key_schema=Schema.STRING, headers=[("trace", b"t1")])]
    _, run_batch = scripted(
        records,
        **{
            "key.converter": "StringConverter",
            "value.converter": JSON,
            "value.converter.schemas.enable": "true",
            "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
    )

    assert run_batch().records == 1

    [written] = read_committed(topic)
    assert written.key == b"o-1"
    assert written.value == (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
        b'{"type":"string","optional":false,"field":"item"}],"optional":false,"name":"order"},'
        b'"payload":{"id":1,"item":"pen"}}'
    )
    assert list(written.headers) == [("trace", b"t1")]


def test_a_predicate_routes_some_records_and_filters_others_whose_offsets_still_commit(
    scripted: Callable[..., tuple[str, Callable[[], Any]]],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    orders, audit, routed = topic_factory("orders"), topic_factory("audit"), topic_factory("v2")
    records = [
        order(orders, 1),
        order(audit, 2),
        order(orders, 3, headers=[("skip", b"")]),
        order(orders, 4),
        order(audit, 5),  # the last record is filtered: its offset must commit all the same
    ]
    name, run_batch = scripted(
        records,
        **{
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "transforms": "dropAudit,dropSkipped,route",
            "transforms.dropAudit.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.dropAudit.predicate": "isOrders",
            "transforms.dropAudit.negate": "true",
            "transforms.dropSkipped.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.dropSkipped.predicate": "hasSkip",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": ".*",
            "transforms.route.replacement": routed,
            "predicates": "isOrders,hasSkip",
            "predicates.isOrders.type": "TopicNameMatches",
            "predicates.isOrders.pattern": orders,
            "predicates.hasSkip.type": "HasHeaderKey",
            "predicates.hasSkip.name": "skip",
        },
    )

    result = run_batch()

    assert result.records == 2 and result.offsets_committed == 1
    assert [r.value for r in read_committed(routed)] == [
        b'{"id":1,"item":"pen"}',
        b'{"id":4,"item":"pen"}',
    ]
    assert read_committed(orders) == [] and read_committed(audit) == []
    assert offsets_of(read_committed, name) == [{"position": 4}]
    acknowledged = {position: metadata for position, metadata in COMMITTED[name]}
    assert sorted(acknowledged) == [0, 1, 2, 3, 4]  # each once
    assert acknowledged[3] is not None and acknowledged[3].topic == routed
    assert {p for p, metadata in acknowledged.items() if metadata is None} == {1, 2, 4}
    assert run_batch().records == 0  # nothing polled twice


def test_tolerance_all_skips_a_failing_record_and_the_offsets_move_past_it(
    scripted: Callable[..., tuple[str, Callable[[], Any]]],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("numbers")
    records = [
        SourceRecord(None, None, topic, v, value_schema=Schema.STRING) for v in ["1", "x", "3"]
    ]
    name, run_batch = scripted(
        records,
        **{
            "transforms": "toNumber",
            "transforms.toNumber.type": "org.apache.kafka.connect.transforms.Cast$Value",
            "transforms.toNumber.spec": "int32",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
        },
    )

    assert run_batch().records == 2
    records.append(SourceRecord(None, None, topic, "4", value_schema=Schema.STRING))
    assert run_batch().records == 1  # a fresh task resumes after the skipped record

    assert [r.value for r in read_committed(topic)] == [b"1", b"3", b"4"]
    assert offsets_of(read_committed, name) == [{"position": 2}, {"position": 3}]


def test_tolerance_none_fails_the_batch_naming_alias_and_class_and_commits_nothing(
    scripted: Callable[..., tuple[str, Callable[[], Any]]],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("numbers")
    records = [
        SourceRecord(None, None, topic, v, value_schema=Schema.STRING) for v in ["1", "x", "3"]
    ]
    name, run_batch = scripted(
        records,
        **{
            "transforms": "toNumber",
            "transforms.toNumber.type": "org.apache.kafka.connect.transforms.Cast$Value",
            "transforms.toNumber.spec": "int32",
        },
    )

    with pytest.raises(ToleranceExceededError) as failed:
        run_batch()

    message = str(failed.value)
    assert "transformation 'toNumber' (org.apache.kafka.connect.transforms.Cast$Value)" in message
    assert "stage TRANSFORMATION" in message
    assert read_committed(topic) == [] and offsets_of(read_committed, name) == []


def test_a_struct_that_does_not_match_its_schema_never_reaches_kafka(
    scripted: Callable[..., tuple[str, Callable[[], Any]]],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("orders")
    name, run_batch = scripted(
        [order(topic, 1), order(topic, 2, item=None)], **{"value.converter": JSON}
    )

    with pytest.raises(ToleranceExceededError) as failed:
        run_batch()

    message = str(failed.value)
    assert f"stage VALUE_CONVERTER with class {JSON}" in message
    assert 'null value for field "item", which is required' in message
    assert read_committed(topic) == [] and offsets_of(read_committed, name) == []
