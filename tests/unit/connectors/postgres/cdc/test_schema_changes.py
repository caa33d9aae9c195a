"""A table whose shape changes while streaming: each shape's events carry their own value
schema, and with Avro each new shape is a new version of the topic's value subject (the
`mock://` registry of confluent-kafka)."""

from __future__ import annotations

import json

from spark_eos_connect.connectors.postgres.cdc.envelope import SourceInfo, TableSchemas
from spark_eos_connect.connectors.postgres.cdc.schemas import ColumnInfo, TableInfo
from spark_eos_connect.converters import make_converter
from spark_eos_connect.converters.schema_registry import mock_client

SOURCE = SourceInfo("shop", "sales", 1_700_000_000_000_000, 7, 100)
ID = ColumnInfo("id", 23, optional=False)
V1 = TableInfo("public", "t", (ID, ColumnInfo("a", 25)), ("id",))
V2 = TableInfo("public", "t", (ID, ColumnInfo("a", 25), ColumnInfo("b", 20)), ("id",))
V3 = TableInfo("public", "t", (ID, ColumnInfo("b", 20)), ("id",))


def test_each_shape_of_a_table_is_a_new_version_of_its_avro_value_subject() -> None:
    url = "mock://cdc-schema-changes"
    avro = make_converter("AvroConverter", {"schema.registry.url": url}, False)
    rows = {V1: ("1", "one"), V2: ("2", "two", "22"), V3: ("3", "33")}
    for table, row in rows.items():
        schemas = TableSchemas("shop", table)
        event = schemas.event("c", None, schemas.row(row), SOURCE, now_us=1)
        avro.from_connect_data(event.topic, event.value_schema, event.value)
    registry = mock_client(url)
    subject = "shop.public.t-value"
    assert sorted(registry.get_versions(subject)) == [1, 2, 3]
    fields = [
        [f["name"] for f in _row_fields(registry.get_version(subject, v).schema.schema_str)]
        for v in (1, 2, 3)
    ]
    assert fields == [["id", "a"], ["id", "a", "b"], ["id", "b"]]


def _row_fields(schema_text: str) -> list[dict[str, object]]:
    envelope = json.loads(schema_text)
    before = next(f for f in envelope["fields"] if f["name"] == "before")  # Value defined here
    record = next(t for t in before["type"] if isinstance(t, dict))
    return record["fields"]  # type: ignore[no-any-return]
