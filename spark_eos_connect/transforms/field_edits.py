"""Field edits inside a key or value: InsertField, ReplaceField, MaskField.

Each has Connect's `$Key` and `$Value` variants. With a schema they work on a `Struct` and
derive the new schema (cached per input schema); without one they work on a mapping and return
a new dict in the order Java's `HashMap` would iterate it, so that the JSON Connect writes and
the JSON written here have the same bytes.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, NonEmptyString
from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct, Timestamp, Type
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._hashmap import JavaHashMap, java_hashset_order
from spark_eos_connect.transforms._jnumbers import (
    big_decimal,
    big_decimal_to_long,
    narrow_int,
    to_float32,
)
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_sink_record,
    require_struct,
    type_name,
)
from spark_eos_connect.transforms.base import KeyOrValueTransformation
from spark_eos_connect.transforms.options import (
    NonDuplicateList,
    RenameMappings,
    distinct,
    parse_rename_mappings,
)
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = [
    "InsertField",
    "InsertFieldKey",
    "InsertFieldValue",
    "MaskField",
    "MaskFieldKey",
    "MaskFieldValue",
    "ReplaceField",
    "ReplaceFieldKey",
    "ReplaceFieldValue",
]

_PACKAGE = "org.apache.kafka.connect.transforms."
REPLACE_NULL_DOC = (
    "Whether to replace fields that have a default value and that are null to the default "
    "value. When set to true, the default value is used, otherwise null is used."
)
_OPTIONALITY = (
    "Suffix with ! to make this a required field, or ? to keep it optional (the default)."
)


def field_value(value: Struct, name: str, with_default: bool) -> Any:
    """A struct field, with its schema default when `with_default` and the field is null."""
    return value.get(name) if with_default else value.get_without_default(name)


@dataclass(frozen=True)
class _Insertion:
    """A field to insert: its name and whether its schema is optional (`?`, the default) or not."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> _Insertion | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return _Insertion(spec[:-1], True)
        if spec.endswith("!"):
            return _Insertion(spec[:-1], False)
        return _Insertion(spec, True)


_INSERTED_FIELDS = ("topic.field", "partition.field", "offset.field", "timestamp.field")


class InsertField(KeyOrValueTransformation):
    """Inserts the topic, partition, offset (sink records), timestamp or a static string."""

    OVERVIEW = "Insert field(s) using attributes from the record metadata or a static value."
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "topic.field",
            ConfigType.STRING,
            None,
            doc=f"Field name for Kafka topic. {_OPTIONALITY}",
        )
        .define(
            "partition.field",
            ConfigType.STRING,
            None,
            doc=f"Field name for Kafka partition. {_OPTIONALITY}",
        )
        .define(
            "offset.field",
            ConfigType.STRING,
            None,
            doc=f"Field name for Kafka offset - only applicable to sink connectors. {_OPTIONALITY}",
        )
        .define(
            "timestamp.field",
            ConfigType.STRING,
            None,
            doc=f"Field name for record timestamp. {_OPTIONALITY}",
        )
        .define(
            "static.field",
            ConfigType.STRING,
            None,
            doc=f"Field name for static data field. {_OPTIONALITY}",
        )
        .define(
            "static.value",
            ConfigType.STRING,
            None,
            doc="Static field value, if field name configured.",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "field insertion"

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        names = [*_INSERTED_FIELDS, "static.field"]
        if all(values[name] is None for name in names):
            listed = ", ".join(prefix + name for name in names)
            return [(prefix + "topic.field", f"No field insertion configured: set one of {listed}")]
        if values["static.field"] is not None and values["static.value"] is None:
            return [
                (
                    prefix + "static.value",
                    f"Missing {prefix}static.value: no value specified for static field "
                    f"{values['static.field']!r}",
                )
            ]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._topic = _Insertion.parse(values["topic.field"])
        self._partition = _Insertion.parse(values["partition.field"])
        self._offset = _Insertion.parse(values["offset.field"])
        self._timestamp = _Insertion.parse(values["timestamp.field"])
        self._static = _Insertion.parse(values["static.field"])
        self._static_value: str | None = values["static.value"]
        self._defaults = bool(values["replace.null.with.default"])
        self._schemas = SchemaCache()

    def _insertions(self, record: ConnectRecord, timestamp: Any) -> list[tuple[str, Any]]:
        """(field, value) pairs in Connect's order, skipping what the record lacks."""
        pairs: list[tuple[str, Any]] = []
        if self._topic is not None:
            pairs.append((self._topic.name, record.topic))
        if self._partition is not None and record.kafka_partition is not None:
            pairs.append((self._partition.name, record.kafka_partition))
        if self._offset is not None:
            pairs.append((self._offset.name, require_sink_record(record, self._PURPOSE)))
        if self._timestamp is not None and record.timestamp is not None:
            pairs.append((self._timestamp.name, timestamp))
        if self._static is not None and self._static_value is not None:
            pairs.append((self._static.name, self._static_value))
        return pairs

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated = JavaHashMap.copy_of(require_map(value, self._PURPOSE))
            updated.put_all(self._insertions(record, record.timestamp))
            return self.updated(record, None, updated.to_dict())
        struct = require_struct(value, self._PURPOSE)
        new_schema = self._schemas.get_or_build(struct.schema, self._extended)
        result = Struct(new_schema)
        for field in struct.schema.fields:
            result.put(field.name, field_value(struct, field.name, self._defaults))
        stamp = None
        if record.timestamp is not None:
            stamp = Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp)
        for name, inserted in self._insertions(record, stamp):
            result.put(name, inserted)
        return self.updated(record, new_schema, result)

    def _extended(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        for spec, required, optional in (
            (self._topic, Schema.STRING, Schema.OPTIONAL_STRING),
            (self._partition, Schema.INT32, Schema.OPTIONAL_INT32),
            (self._offset, Schema.INT64, Schema.OPTIONAL_INT64),
            (self._timestamp, Timestamp.SCHEMA, Timestamp.builder().optional().build()),
            (self._static, Schema.STRING, Schema.OPTIONAL_STRING),
        ):
            if spec is not None:
                builder.field(spec.name, optional if spec.optional else required)
        return builder.build()


class InsertFieldKey(InsertField):
    """InsertField on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "InsertField$Key"


class InsertFieldValue(InsertField):
    """InsertField on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "InsertField$Value"


class ReplaceField(KeyOrValueTransformation):
    """Keeps `include`d fields (all by default) minus `exclude`d ones, then applies `renames`.

    Kafka 4 dropped the old `whitelist`/`blacklist` names; they are reported as unknown options.
    """

    OVERVIEW = "Filter or rename fields."
    REMOVED_OPTIONS = {"whitelist": "include", "blacklist": "exclude"}
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "exclude",
            ConfigType.LIST,
            [],
            validator=NonDuplicateList(),
            doc="Fields to exclude. This takes precedence over the fields to include.",
        )
        .define(
            "include",
            ConfigType.LIST,
            [],
            validator=NonDuplicateList(),
            doc="Fields to include. If specified, only these fields will be used.",
        )
        .define(
            "renames",
            ConfigType.LIST,
            [],
            validator=RenameMappings(),
            doc="Field rename mappings.",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "field replacement"

    def setup(self, values: dict[str, Any]) -> None:
        self._exclude = frozenset(values["exclude"])
        self._include = frozenset(values["include"])
        self._renames = parse_rename_mappings("renames", values["renames"])
        self._reverse = {new: old for old, new in self._renames.items()}
        self._defaults = bool(values["replace.null.with.default"])
        self._schemas = SchemaCache()

    def _keeps(self, name: str) -> bool:
        return name not in self._exclude and (not self._include or name in self._include)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            source = require_map(value, self._PURPOSE)
            updated = JavaHashMap.with_capacity(len(source))
            updated.put_all(
                (self._renames.get(name, name), item)
                for name, item in source.items()
                if self._keeps(name)
            )
            return self.updated(record, None, updated.to_dict())
        struct = require_struct(value, self._PURPOSE)
        new_schema = self._schemas.get_or_build(struct.schema, self._filtered)
        result = Struct(new_schema)
        for field in new_schema.fields:
            original = self._reverse.get(field.name, field.name)
            result.put(field.name, field_value(struct, original, self._defaults))
        return self.updated(record, new_schema, result)

    def _filtered(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if self._keeps(field.name):
                builder.field(self._renames.get(field.name, field.name), field.schema)
        return builder.build()


class ReplaceFieldKey(ReplaceField):
    """ReplaceField on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "ReplaceField$Key"


class ReplaceFieldValue(ReplaceField):
    """ReplaceField on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "ReplaceField$Value"


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _empty_like(value: Any) -> Any:
    """The "null value" Connect masks a value with: 0, false, "", an empty list or map."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, dt.datetime):
        return _EPOCH if value.tzinfo is not None else _EPOCH.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return _EPOCH.date()
    if isinstance(value, dt.time):
        return dt.time(0)
    if isinstance(value, list | tuple):
        return []
    if isinstance(value, Mapping):
        return {}
    raise DataError(f"Cannot mask value of type: {type_name(value)}")


def _replacement_for(value: Any, schema: Schema | None, replacement: str) -> Any:
    """`replacement` converted to the type of `value` (numbers and strings only)."""
    kind = None if schema is None else schema.type
    is_decimal = isinstance(value, decimal.Decimal)
    if isinstance(value, bool) or (not isinstance(value, int | float | str) and not is_decimal):
        raise DataError(f"Cannot mask value of type {type_name(value)} with custom replacement.")
    if isinstance(value, str):
        return replacement
    try:
        number = big_decimal(replacement)
    except ValueError:
        if is_decimal:
            raise DataError(f"Unable to convert {replacement} (str) to number") from None
        raise DataError(f"Unable to convert {replacement} (str) to a number") from None
    if is_decimal:
        return number
    if isinstance(value, int):
        bits = _INT_BITS.get(kind, 64) if kind is not None else 64
        return narrow_int(big_decimal_to_long(number), bits)
    as_double = float(number)
    return to_float32(as_double) if kind is Type.FLOAT32 else as_double


class MaskField(KeyOrValueTransformation):
    """Replaces `fields` with a null-like value of their type, or with `replacement`."""

    OVERVIEW = (
        "Mask specified fields with a valid null value for the field type (0, false, empty "
        "string, and so on), or with a replacement converted to the field's type (numbers and "
        "strings only)."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "fields",
            ConfigType.LIST,
            validator=NonDuplicateList(allow_empty=False),
            importance="high",
            doc="Names of fields to mask.",
        )
        .define(
            "replacement",
            ConfigType.STRING,
            None,
            validator=NonEmptyString(),
            importance="low",
            doc="Custom value replacement, that will be applied to all 'fields' values "
            "(numeric or non-empty string values only).",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "mask fields"

    def setup(self, values: dict[str, Any]) -> None:
        self._fields: list[str] = java_hashset_order(distinct(values["fields"]))
        self._masked = frozenset(self._fields)
        self._replacement: str | None = values["replacement"]
        self._defaults = bool(values["replace.null.with.default"])

    def _mask(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        if self._replacement is None:
            return _empty_like(value)
        return _replacement_for(value, schema, self._replacement)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            source = require_map(value, self._PURPOSE)
            updated = JavaHashMap.copy_of(source)
            for name in self._fields:
                updated.put(name, self._mask(source.get(name), None))
            return self.updated(record, None, updated.to_dict())
        struct = require_struct(value, self._PURPOSE)
        result = Struct(struct.schema)
        for field in struct.schema.fields:
            original = field_value(struct, field.name, self._defaults)
            masked = self._mask(original, field.schema) if field.name in self._masked else original
            result.put(field.name, masked)
        return self.updated(record, struct.schema, result)


class MaskFieldKey(MaskField):
    """MaskField on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "MaskField$Key"


class MaskFieldValue(MaskField):
    """MaskField on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "MaskField$Value"
