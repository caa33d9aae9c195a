"""Reshaping a key or value: ValueToKey, ExtractField (with nested paths) and HoistField."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, ValidString
from spark_eos_connect.api.data import Field, Schema, SchemaBuilder, Struct
from spark_eos_connect.errors import ConfigError, DataError
from spark_eos_connect.transforms._hashmap import JavaHashMap
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    require_map,
    require_map_or_null,
    require_struct,
    require_struct_or_null,
)
from spark_eos_connect.transforms.base import KeyOrValueTransformation, Transformation
from spark_eos_connect.transforms.field_edits import REPLACE_NULL_DOC, field_value
from spark_eos_connect.transforms.options import NonDuplicateList, distinct
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = [
    "ExtractField",
    "ExtractFieldKey",
    "ExtractFieldValue",
    "FieldPath",
    "HoistField",
    "HoistFieldKey",
    "HoistFieldValue",
    "ValueToKey",
]

_PACKAGE = "org.apache.kafka.connect.transforms."


class ValueToKey(Transformation):
    """Replaces the key with a new one made of some fields of the value."""

    CONNECT_CLASS = _PACKAGE + "ValueToKey"
    OVERVIEW = "Replace the record key with a new key formed from a subset of fields in the value."
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "fields",
            ConfigType.LIST,
            validator=NonDuplicateList(allow_empty=False),
            importance="high",
            doc="Field names on the record value to extract as the record key.",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "copying fields from value to key"

    def setup(self, values: dict[str, Any]) -> None:
        self._fields: list[str] = distinct(values["fields"])
        self._defaults = bool(values["replace.null.with.default"])
        self._schemas = SchemaCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.value_schema is None:
            source = require_map(record.value, self._PURPOSE)
            key = JavaHashMap.with_capacity(len(self._fields))
            key.put_all((name, source.get(name)) for name in self._fields)
            return record.new_record(key_schema=None, key=key.to_dict())
        value = require_struct(record.value, self._PURPOSE)
        key_schema = self._schemas.get_or_build(value.schema, self._key_schema)
        new_key = Struct(key_schema)
        for name in self._fields:
            new_key.put(name, field_value(value, name, self._defaults))
        return record.new_record(
            key_schema=key_schema, key=new_key, value_schema=value.schema, value=value
        )

    def _key_schema(self, value_schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for name in self._fields:
            found = value_schema.field(name)
            if found is None:
                raise DataError(f"Field does not exist: {name}")
            builder.field(name, found.schema)
        return builder.build()


class FieldPath:
    """A path to a (possibly nested) field, as `field.syntax.version` V1 or V2 reads it.

    V1: the whole text is one field name. V2: dots separate steps; a step wrapped in backticks
    may hold dots (`` `a.b`.c ``), a backslash before a backtick keeps it in the name.
    """

    def __init__(self, text: str, version: str) -> None:
        self.text = text
        self.steps = [text] if version.upper() == "V1" else _steps_v2(text)

    def field_from(self, schema: Schema) -> Field | None:
        """The field the path points at in a struct schema, or None."""
        current = schema
        for step in self.steps[:-1]:
            found = current.field(step)
            if found is None:
                return None
            current = found.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, value: Struct, with_default: bool) -> Any:
        """The value at the path, None when a step is missing or null."""
        current: Struct | None = value
        for step in self.steps[:-1]:
            assert current is not None
            if current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), "nested field access")
            if current is None:
                return None
        assert current is not None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return field_value(current, last, with_default)

    def value_from_map(self, value: Mapping[Any, Any]) -> Any:
        """The value at the path in nested mappings, None when a step is missing or null."""
        current: Mapping[Any, Any] | None = value
        for step in self.steps[:-1]:
            assert current is not None
            current = require_map_or_null(current.get(step), "nested field access")
            if current is None:
                return None
        assert current is not None
        return current.get(self.steps[-1])


def _incomplete(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {at} to escape it"
    )


def _steps_v2(path: str) -> list[str]:
    steps: list[str] = []
    i = 0
    n = len(path)
    while 0 <= i < n:
        if path[i] != "`":
            end = path.find(".", i)
            if end >= 0:
                steps.append(path[i:end])
                i = end + 1
            else:
                steps.append(path[i:])
                i = n
            continue
        opened = i
        i += 1
        start = i
        name: list[str] = []
        while True:
            i = path.find("`", i)
            if i == -1:
                raise _incomplete(path, opened)
            escaped = path[i - 1] == "\\"
            if i >= n - 1:
                if escaped:
                    raise _incomplete(path, opened)
                name.append(path[start:i])
                steps.append("".join(name))
                i += 1
                break
            if path[i + 1] != ".":
                i += 1
                continue
            if escaped:
                name.append(path[start : i - 1] + "`")
                i += 1
                start = i
                continue
            name.append(path[start:i])
            steps.append("".join(name))
            i += 2
            break
    if path.endswith("."):
        steps.append("")
    if not steps:
        raise ConfigError("an empty field path names no field")
    return steps


class ExtractField(KeyOrValueTransformation):
    """Replaces the key or value with one of its fields (nested with `field.syntax.version=V2`)."""

    OVERVIEW = (
        "Extract the specified field from a Struct when schema present, or a Map in the case of "
        "schemaless data. Any null values are passed through unmodified."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define("field", ConfigType.STRING, doc="Field name to extract.")
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
        .define(
            "field.syntax.version",
            ConfigType.STRING,
            "V1",
            validator=ValidString.one_of("V1", "V2", case_insensitive=True),
            importance="high",
            doc="V1: field paths name a field at the root of the struct or map. V2: dotted "
            "paths reach nested fields; backticks wrap names that contain dots, e.g. "
            "`foo.bar`.baz.",
        )
    )
    _PURPOSE = "field extraction"

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        try:
            FieldPath(values["field"], values["field.syntax.version"])
        except ConfigError as error:
            return [(prefix + "field", f"Invalid value for {prefix}field: {error}")]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._path = FieldPath(values["field"], values["field.syntax.version"])
        self._defaults = bool(values["replace.null.with.default"])

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema = self.operating_schema(record)
        if schema is None:
            source = require_map_or_null(self.operating_value(record), self._PURPOSE)
            extracted = None if source is None else self._path.value_from_map(source)
            return self.updated(record, None, extracted)
        struct = require_struct_or_null(self.operating_value(record), self._PURPOSE)
        found = self._path.field_from(schema)
        if found is None:
            raise DataError(f"Unknown field: {self._path.text}")
        extracted = None if struct is None else self._path.value_from_struct(struct, self._defaults)
        return self.updated(record, found.schema, extracted)


class ExtractFieldKey(ExtractField):
    """ExtractField on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "ExtractField$Key"


class ExtractFieldValue(ExtractField):
    """ExtractField on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "ExtractField$Value"


class HoistField(KeyOrValueTransformation):
    """Wraps the key or value in a struct (or map) with the single field `field`."""

    OVERVIEW = (
        "Wrap data using the specified field name in a Struct when schema present, or a Map in "
        "the case of schemaless data."
    )
    CONFIG_DEF = ConfigDef().define(
        "field",
        ConfigType.STRING,
        doc="Field name for the single field that will be created in the resulting Struct or Map.",
    )

    def setup(self, values: dict[str, Any]) -> None:
        self._field: str = values["field"]
        self._schemas = SchemaCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.updated(record, None, {self._field: value})
        wrapper = self._schemas.get_or_build(
            schema, lambda s: SchemaBuilder.struct().field(self._field, s).build()
        )
        return self.updated(record, wrapper, Struct(wrapper).put(self._field, value))


class HoistFieldKey(HoistField):
    """HoistField on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "HoistField$Key"


class HoistFieldValue(HoistField):
    """HoistField on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "HoistField$Value"
