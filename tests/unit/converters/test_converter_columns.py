"""`Converter.to_connect_column`: a whole Arrow column gives what `to_connect_data` gives value
by value, and a column holding a value that cannot be read raises (the sink task then converts
it value by value to find which)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_eos_connect.converters import make_converter

COLUMNS = {
    "StringConverter": [b"a", None, "\u00e9t\u00e9 \u2603".encode(), b""],
    "ByteArrayConverter": [b"\x00\xff", None, b""],
    "JsonConverter": [b'{"a":[1,2.5,null]}', None, b'"x"', b"true", b"  "],
    "LongConverter": [b"\x00" * 7 + b"\x2a", None],
}


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("StringConverter", {}),
        ("StringConverter", {"converter.encoding": "UTF-16"}),
        ("ByteArrayConverter", {}),
        ("JsonConverter", {"schemas.enable": "false"}),
        ("LongConverter", {}),
    ],
)
def test_a_column_converts_as_its_values_do(name: str, options: dict[str, str]) -> None:
    converter = make_converter(name, options, is_key=False)
    values = COLUMNS[name]
    if options.get("converter.encoding") == "UTF-16":
        values = [None if v is None else v.decode().encode("utf-16-be") for v in values]

    schemas, converted = converter.to_connect_column("t", pa.array(values, pa.binary()))

    one_by_one = [converter.to_connect_data("t", v) for v in values]
    assert schemas == [r.schema for r in one_by_one]
    assert converted == [r.value for r in one_by_one]


def test_json_with_schemas_converts_a_column_value_by_value() -> None:
    converter = make_converter("JsonConverter", {}, is_key=False)
    data = b'{"schema":{"type":"int32","optional":false},"payload":7}'

    schemas, values = converter.to_connect_column("t", pa.array([data, data], pa.binary()))

    assert values == [7, 7]
    assert schemas[0] is not None and schemas[0].type.name == "INT32"


@pytest.mark.parametrize(
    ("name", "bad"),
    [("StringConverter", b"\xff\xfe"), ("JsonConverter", b"{not json")],
)
def test_a_column_with_an_unreadable_value_raises(name: str, bad: bytes) -> None:
    converter = make_converter(name, {"schemas.enable": "false"}, is_key=False)

    with pytest.raises(Exception):  # noqa: B017 - any error: the task retries one by one
        converter.to_connect_column("t", pa.array([b'"ok"', bad], pa.binary()))
