"""Debezium's stand-ins for unchanged TOASTed values, per column type."""

from __future__ import annotations

import json
import uuid

from spark_eos_connect.api.data import Schema, SchemaBuilder
from spark_eos_connect.connectors.postgres.cdc.schemas import ColumnInfo, column_schema
from spark_eos_connect.connectors.postgres.cdc.types import PgType
from spark_eos_connect.connectors.postgres.cdc.unavailable import missing_value, unavailable_value
from spark_eos_connect.connectors.postgres.cdc.value_options import DEFAULT_SETTINGS, ValueSettings

TEXT = "__debezium_unavailable_value"


def value(column: ColumnInfo, settings: ValueSettings = DEFAULT_SETTINGS) -> object:
    return unavailable_value(column, column_schema(column, settings), settings)


def array(name: str, oid: int, element: PgType) -> ColumnInfo:
    return ColumnInfo("c", oid, pg_type=PgType(oid, name, "b", "A", element=element))


def test_text_and_bytes_take_the_placeholder_as_text_and_as_bytes() -> None:
    assert value(ColumnInfo("c", 25)) == TEXT
    assert value(ColumnInfo("c", 17)) == TEXT.encode()
    hex_mode = ValueSettings(binary_mode="hex")
    assert value(ColumnInfo("c", 17), hex_mode) == TEXT


def test_a_placeholder_given_in_hex_is_those_bytes() -> None:
    settings = ValueSettings(unavailable_value_placeholder="hex:00ff")
    assert value(ColumnInfo("c", 17), settings) == b"\x00\xff"


def test_arrays_hold_one_element_made_of_the_placeholder() -> None:
    text = PgType(25, "text", "b", "S")
    int4 = PgType(23, "int4", "b", "N")
    uuid_type = PgType(2950, "uuid", "b", "U")
    assert value(array("_text", 1009, text)) == [TEXT]
    assert value(array("_int4", 1007, int4)) == list(TEXT.encode())
    (made,) = value(array("_uuid", 2951, uuid_type))  # type: ignore[misc]
    assert uuid.UUID(made).version == 3


def test_hstore_is_a_one_entry_map_or_its_json() -> None:
    hstore = ColumnInfo("c", 16400, pg_type=PgType(16400, "hstore", "b", "U"))
    assert value(hstore) == json.dumps({TEXT: TEXT}, separators=(",", ":"))
    assert value(hstore, ValueSettings(hstore_mode="map")) == {TEXT: TEXT}


def test_other_types_take_their_zero_when_required_and_null_when_optional() -> None:
    assert missing_value(Schema.INT32) == 0
    assert missing_value(Schema.OPTIONAL_INT32) is None
    assert missing_value(SchemaBuilder.float64().build()) == 0.0
    assert value(ColumnInfo("c", 23)) is None
