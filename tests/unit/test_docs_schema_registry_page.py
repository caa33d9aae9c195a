"""The code blocks of docs/converters/schema-registry.md run: the source example's options
write Avro a registry reads back (URL and secret swapped for the test double's), and the test
double example serves a registry URL."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from spark_eos_connect.api.data import Schema
from spark_eos_connect.api.source import SourceRecord
from spark_eos_connect.converters import make_converter
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy
from spark_eos_connect.source.conversion import RecordPreparer, record_conversion_problems
from spark_eos_connect.source.plan import RecordConversion
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

PAGE = Path(__file__).resolve().parents[2] / "docs" / "converters" / "schema-registry.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_source_example_writes_avro_a_registry_reads_back() -> None:
    scope: dict[str, Any] = {}
    exec(blocks()[0], scope)
    options = dict(scope["source_options"])
    assert options["value.converter.schema.registry.url"].count(",") == 1
    with SchemaRegistryDouble() as registry:
        options["value.converter.schema.registry.url"] = f"http://127.0.0.1:9,{registry.url}"
        options["value.converter.basic.auth.user.info"] = "user:secret"
        assert record_conversion_problems(options) == {}
        conversion = RecordConversion(
            key_converter=None,
            value_converter=options["value.converter"],
            header_converter=None,
            options=options,
            errors=ErrorPolicy("lines-avro"),
        )
        preparer = RecordPreparer(conversion, options, "lines-avro-0")
        line = SourceRecord(
            {"filename": "x"}, {"position": 6}, "lines", "hello", value_schema=Schema.STRING
        )
        written = preparer.prepare([line]).ready[0].value
        reader = make_converter("AvroConverter", {"schema.registry.url": registry.url}, False)
        assert reader.to_connect_data("lines", written).value.to_dict() == {"line": "hello"}
        assert "POST /subjects/lines-value/versions" in registry.requests


def test_the_test_double_example_serves_a_registry_url() -> None:
    scope: dict[str, Any] = {}
    exec(blocks()[1], scope)
    assert scope["options"]["value.converter.schema.registry.url"].startswith("http://127.0.0.1:")
    assert scope["registry"].requests == []
