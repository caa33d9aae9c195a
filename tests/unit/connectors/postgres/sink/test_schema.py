"""From Connect schemas to columns and rows, and the errors naming a record that cannot be
written."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from spark_eos_connect.api.sink import SinkRecord
from spark_eos_connect.connectors.postgres.sink.config import parse_sink_config
from spark_eos_connect.connectors.postgres.sink.schema import (
    RecordError,
    column_mismatch,
    layout_for,
    sql_type,
)
from spark_eos_connect.connectors.postgres.sink.writer import plan_runs

VALUE = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64)
    .field("name", Schema.OPTIONAL_STRING)
    .field("qty", Schema.INT32)
    .build()
)
KEY = SchemaBuilder.struct().field("id", Schema.INT64).build()


def config(**options: str) -> Any:
    return parse_sink_config({"name": "pg", "connection.url": "postgresql://db/x", **options})


def record(
    value: Any = "default",
    key: Any = None,
    key_schema: Schema | None = None,
    value_schema: Schema | None = VALUE,
    offset: int = 7,
) -> SinkRecord:
    if value == "default":
        value = Struct(VALUE, {"id": 1, "name": "a", "qty": 3})
    return SinkRecord("orders", 2, offset, key, value, None, (), key_schema, value_schema)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (Schema.INT8, "SMALLINT"),
        (Schema.INT16, "SMALLINT"),
        (Schema.INT32, "INTEGER"),
        (Schema.INT64, "BIGINT"),
        (Schema.FLOAT32, "REAL"),
        (Schema.FLOAT64, "DOUBLE PRECISION"),
        (Schema.BOOLEAN, "BOOLEAN"),
        (Schema.STRING, "TEXT"),
        (Schema.BYTES, "BYTEA"),
        (Decimal.schema(2), "NUMERIC"),
        (Date.schema(), "DATE"),
        (Time.schema(), "TIME"),
        (Timestamp.schema(), "TIMESTAMP"),
        (SchemaBuilder.array(Schema.INT32).build(), "INTEGER[]"),
        (SchemaBuilder.map(Schema.STRING, Schema.STRING).build(), None),
        (VALUE, None),
    ],
)
def test_connect_types_map_to_postgres_types(schema: Schema, expected: str | None) -> None:
    assert sql_type(schema) == expected


@pytest.mark.parametrize(
    ("wanted", "column", "mismatch"),
    [
        ("INTEGER", "bigint", False),
        ("BIGINT", "numeric", False),
        ("TEXT", "integer", True),
        ("DOUBLE PRECISION", "integer", True),
        ("BOOLEAN", "text", True),
        ("TEXT", "timestamp without time zone", False),
        ("TIMESTAMP", "timestamp with time zone", False),
        ("INTEGER[]", "integer[]", False),
        ("TEXT", "jsonb", False),
    ],
)
def test_column_mismatch(wanted: str, column: str, mismatch: bool) -> None:
    assert column_mismatch(wanted, column) is mismatch


def test_pk_none_writes_the_value_fields() -> None:
    layout = layout_for(config(), record())
    assert layout.names == ("id", "name", "qty")
    assert layout.key_columns == ()
    assert layout.row(record()) == (1, "a", 3)
    assert [c.nullable for c in layout.columns] == [False, True, False]


def test_pk_kafka_adds_the_coordinates_first() -> None:
    layout = layout_for(config(**{"pk.mode": "kafka"}), record())
    assert layout.names[:3] == ("__connect_topic", "__connect_partition", "__connect_offset")
    assert layout.row(record()) == ("orders", 2, 7, 1, "a", 3)
    renamed = layout_for(config(**{"pk.mode": "kafka", "pk.fields": "t,p,o"}), record())
    assert [c.type for c in renamed.key_columns] == ["TEXT", "INTEGER", "BIGINT"]


def test_pk_record_key_struct_and_primitive() -> None:
    keyed = record(key=Struct(KEY, {"id": 9}), key_schema=KEY)
    # the value's own `id` field is not written twice: the key column holds the key's
    assert layout_for(config(**{"pk.mode": "record_key"}), keyed).names == ("id", "name", "qty")
    layout = layout_for(config(**{"pk.mode": "record_key", "fields.whitelist": "name"}), keyed)
    assert layout.names == ("id", "name")
    assert layout.row(keyed) == (9, "a")
    primitive = record(key="k1", key_schema=Schema.STRING)
    layout = layout_for(config(**{"pk.mode": "record_key", "pk.fields": "code"}), primitive)
    assert layout.names == ("code", "id", "name", "qty")
    assert layout.key(primitive) == ("k1",)


def test_field_exclude_list_drops_value_fields_for_every_topic_or_one_topic() -> None:
    assert layout_for(config(**{"field.exclude.list": "qty"}), record()).names == ("id", "name")
    one_topic = config(**{"field.exclude.list": "orders:name,payments:qty"})
    layout = layout_for(one_topic, record())
    assert layout.names == ("id", "qty")
    assert layout.row(record()) == (1, 3)
    # with the whitelist: the whitelisted fields less the excluded ones
    both = config(**{"fields.whitelist": "name,qty", "field.exclude.list": "qty"})
    assert layout_for(both, record()).names == ("name",)


def test_rows_take_values_by_position_and_apply_a_fields_default() -> None:
    one = layout_for(config(**{"fields.whitelist": "qty"}), record())
    assert one.row(record()) == (3,)
    reordered = layout_for(config(**{"fields.whitelist": "qty,id"}), record())
    assert reordered.row(record()) == (3, 1)
    defaulted = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64)
        .field("qty", SchemaBuilder.int32().optional().default_value(5).build())
        .build()
    )
    unset = record(Struct(defaulted, {"id": 4}), value_schema=defaulted)
    assert layout_for(config(), unset).row(unset) == (4, 5)


def test_field_exclude_list_never_drops_a_key_column() -> None:
    options = {"pk.mode": "record_value", "pk.fields": "id", "field.exclude.list": "id,name"}
    layout = layout_for(config(**options), record())
    assert layout.names == ("id", "qty")
    assert layout.key(record()) == (1,)


def test_plan_runs_lays_out_each_topic_by_its_own_exclusions() -> None:
    other = SinkRecord(
        "payments", 0, 1, None, Struct(VALUE, {"id": 2, "name": "b", "qty": 4}), None, (),
        None, VALUE,
    )  # fmt: skip
    options = {"field.exclude.list": "orders:qty", "table.name.format": "all"}
    layouts: dict[Any, Any] = {}
    runs = plan_runs(config(**options), [record(), other, record(offset=8)], layouts)
    assert [(r.layout.names, len(r.records)) for r in runs] == [
        (("id", "name"), 1),
        (("id", "name", "qty"), 1),
        (("id", "name"), 1),
    ]
    assert len(layouts) == 2


def test_pk_record_value_takes_the_key_from_the_value() -> None:
    layout = layout_for(config(**{"pk.mode": "record_value", "pk.fields": "id"}), record())
    assert layout.names == ("id", "name", "qty")
    assert layout.key(record()) == (1,)
    assert layout.row(record()) == (1, "a", 3)


def test_logical_values_pass_as_python_values() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("at", Timestamp.schema())
        .field("price", Decimal.schema(2))
        .build()
    )
    at = dt.datetime(2024, 1, 2, 3, 4, 5)
    value = Struct(schema, {"at": at, "price": decimal.Decimal("1.25")})
    layout = layout_for(config(), record(value, value_schema=schema))
    assert [c.type for c in layout.columns] == ["TIMESTAMP", "NUMERIC"]
    assert layout.row(record(value, value_schema=schema)) == (at, decimal.Decimal("1.25"))


@pytest.mark.parametrize(
    ("kwargs", "options", "message"),
    [
        ({"value_schema": None}, {}, "orders-2@7: the value has no schema"),
        ({"value": "text", "value_schema": Schema.STRING}, {}, "the value is a STRING"),
        ({}, {"pk.mode": "record_key"}, "needs a key with a schema"),
        (
            {"key": "k", "key_schema": Schema.STRING},
            {"pk.mode": "record_key"},
            "pk.fields must name exactly one column",
        ),
        ({}, {"fields.whitelist": "nope"}, "no field 'nope'"),
    ],
)
def test_records_that_cannot_be_written_are_named(
    kwargs: dict[str, Any], options: dict[str, str], message: str
) -> None:
    with pytest.raises(RecordError, match="orders-2@7") as caught:
        layout_for(config(**options), record(**kwargs))
    assert message in str(caught.value)


def test_nested_structs_have_no_column_type() -> None:
    schema = SchemaBuilder.struct().field("inner", KEY).build()
    value = Struct(schema, {"inner": Struct(KEY, {"id": 1})})
    with pytest.raises(RecordError, match=r"'inner' has schema STRUCT.*Flatten"):
        layout_for(config(), record(value, value_schema=schema))


def test_plan_runs_groups_per_table_and_kind_and_refuses_tombstones_without_delete() -> None:
    options = {"pk.mode": "record_key", "delete.enabled": "true", "fields.whitelist": "name"}
    keyed = [record(key=Struct(KEY, {"id": i}), key_schema=KEY, offset=i) for i in range(3)]
    tombstone = record(value=None, key=Struct(KEY, {"id": 1}), key_schema=KEY, value_schema=None)
    runs = plan_runs(config(**options), [keyed[0], keyed[1], tombstone, keyed[2]], {})
    assert [(r.delete, len(r.records)) for r in runs] == [(False, 2), (True, 1), (False, 1)]
    assert runs[0].layout is runs[2].layout
    with pytest.raises(RecordError, match=r"orders-2@7: its value is null .*delete.enabled=false"):
        plan_runs(config(**{"pk.mode": "record_key"}), [tombstone], {})
    missing_key = record(key=None, key_schema=KEY)
    with pytest.raises(RecordError, match="orders-2@7: its key is null"):
        plan_runs(config(**options), [missing_key], {})
