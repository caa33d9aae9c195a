"""Header transformations: HeaderFrom (fields to headers), InsertHeader, DropHeaders."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, ValidString
from spark_eos_connect.api.data import Schema, SchemaAndValue, SchemaBuilder, Struct
from spark_eos_connect.converters.values import parse_string
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._hashmap import JavaHashMap
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_struct,
)
from spark_eos_connect.transforms.base import KeyOrValueTransformation, Transformation
from spark_eos_connect.transforms.options import NonDuplicateList, NonEmptyList
from spark_eos_connect.transforms.record import ConnectRecord, Header

__all__ = ["DropHeaders", "HeaderFrom", "HeaderFromKey", "HeaderFromValue", "InsertHeader"]

_PACKAGE = "org.apache.kafka.connect.transforms."
_REPLACE_NULL_DOC = (
    "Whether to replace fields that have a default value and that are null to the default "
    "value. When set to true, the default value is used, otherwise null is used."
)


class HeaderFrom(KeyOrValueTransformation):
    """Copies or moves fields of the key or value into headers named by `headers`."""

    OVERVIEW = (
        "Moves or copies fields in the key/value of a record into that record's headers; "
        "the n-th entry of fields goes to the header named by the n-th entry of headers."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "fields",
            ConfigType.LIST,
            validator=NonEmptyList(),
            importance="high",
            doc="Field names in the record whose values are to be copied or moved to headers.",
        )
        .define(
            "headers",
            ConfigType.LIST,
            validator=NonEmptyList(),
            importance="high",
            doc="Header names, in the same order as the field names listed in fields.",
        )
        .define(
            "operation",
            ConfigType.STRING,
            validator=ValidString.one_of("move", "copy"),
            importance="high",
            doc="move if the fields are to be moved to the headers (removed from the key/value), "
            "or copy if they are to be copied (retained in the key/value).",
        )
        .define(
            "replace.null.with.default",
            ConfigType.BOOLEAN,
            True,
            importance="medium",
            doc=_REPLACE_NULL_DOC,
        )
    )

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        if len(values["fields"]) != len(values["headers"]):
            return [
                (
                    prefix + "headers",
                    f"'{prefix}fields' config must have the same number of elements as "
                    f"'{prefix}headers' config.",
                )
            ]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._pairs: list[tuple[str, str]] = list(
            zip(values["fields"], values["headers"], strict=True)
        )
        self._move = values["operation"] == "move"
        self._defaults = bool(values["replace.null.with.default"])
        self._purpose = "header " + values["operation"]
        self._moved = SchemaCache()

    def _field_value(self, value: Struct, name: str) -> Any:
        return value.get(name) if self._defaults else value.get_without_default(name)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema = self.operating_schema(record)
        headers = list(record.headers)
        if schema is None:
            source = require_map(self.operating_value(record), self._purpose)
            updated = JavaHashMap.copy_of(source)
            for field, header in self._pairs:
                if self._move:
                    updated.remove(field)
                headers.append(Header(header, source.get(field)))
            result = self.updated(record, None, updated.to_dict())
            return result.new_record(headers=headers)
        value = require_struct(self.operating_value(record), self._purpose)
        if self._move:
            new_schema = self._moved.get_or_build(schema, self._without_fields)
            new_value = Struct(new_schema)
            for kept in new_schema.fields:
                new_value.put(kept.name, self._field_value(value, kept.name))
        else:
            new_schema, new_value = schema, value
        for field_name, header in self._pairs:
            found = schema.field(field_name)
            if found is None:
                raise DataError(f"Unknown field {field_name!r} for [{self._purpose}]")
            present = value.schema.field(field_name) is not None
            field_value = self._field_value(value, field_name) if present else None
            headers.append(Header(header, field_value, found.schema))
        return self.updated(record, new_schema, new_value).new_record(headers=headers)

    def _without_fields(self, schema: Schema) -> Schema:
        moved = {field for field, _ in self._pairs}
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name not in moved:
                builder.field(field.name, field.schema)
        return builder.build()


class HeaderFromKey(HeaderFrom):
    """HeaderFrom on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "HeaderFrom$Key"


class HeaderFromValue(HeaderFrom):
    """HeaderFrom on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "HeaderFrom$Value"


def literal(text: str) -> SchemaAndValue:
    """`value.literal` as `Values.parseString` reads it; an array or map whose elements share
    no type (empty, all null or mixed) is refused: Connect gives it a schema without element
    schema, which the project's schema model cannot hold."""
    parsed = parse_string(text)
    if parsed.schema is None and isinstance(parsed.value, list | dict):
        raise DataError(
            f"the {'array' if isinstance(parsed.value, list) else 'map'} {text} has no common "
            "element type (it is empty, all null or mixed)"
        )
    return parsed


class InsertHeader(Transformation):
    """Adds the header `header` with the parsed `value.literal` to every record."""

    CONNECT_CLASS = _PACKAGE + "InsertHeader"
    OVERVIEW = (
        "Add a header to each record; the literal is parsed like Connect's Values.parseString "
        "(numbers, booleans, dates, arrays and maps get their type, anything else is a string)."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define("header", ConfigType.STRING, importance="high", doc="The name of the header.")
        .define(
            "value.literal",
            ConfigType.STRING,
            importance="high",
            doc="The literal value that is to be set as the header value on all records.",
        )
    )

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        try:
            literal(values["value.literal"])
        except DataError as error:
            key = prefix + "value.literal"
            return [(key, f"Invalid value {values['value.literal']!r} for {key}: {error}")]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._header: str = values["header"]
        parsed = literal(values["value.literal"])
        self._literal = Header(self._header, parsed.value, parsed.schema)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return record.new_record(headers=(*record.headers, self._literal))


class DropHeaders(Transformation):
    """Removes every header whose name is in `headers`."""

    CONNECT_CLASS = _PACKAGE + "DropHeaders"
    OVERVIEW = "Removes one or more headers from each record."
    CONFIG_DEF = ConfigDef().define(
        "headers",
        ConfigType.LIST,
        validator=NonDuplicateList(allow_empty=False),
        importance="high",
        doc="The name of the headers to be removed.",
    )

    def setup(self, values: dict[str, Any]) -> None:
        self._names = frozenset(values["headers"])

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        kept = tuple(h for h in record.headers if h.key not in self._names)
        return record.new_record(headers=kept)
