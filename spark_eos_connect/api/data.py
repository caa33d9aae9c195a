"""Kafka Connect's data model (`org.apache.kafka.connect.data`) for connector authors.

A record key or value may carry a `Schema`; the value then has to match it. Public names (stable):

- `Type`: the schema types, `Type.INT8` ... `Type.STRUCT`; `.value` is Connect's JSON name
  ("int8", "boolean", "struct", ...).
- `Schema`: a frozen dataclass (`type`, `optional`, `default_value`, `name`, `version`, `doc`,
  `parameters`, `fields`, `key_schema`, `value_schema`) with `field(name)`, `validate(value)`,
  and the predefined schemas `Schema.INT8` ... `Schema.BYTES` and `Schema.OPTIONAL_INT8` ...
  `Schema.OPTIONAL_BYTES`.
- `Field`: `name`, `index`, `schema` of one struct field.
- `SchemaBuilder`: Connect's builder, e.g. `SchemaBuilder.struct().name("Order")
  .field("id", Schema.INT64).field("note", Schema.OPTIONAL_STRING).build()`; constructors
  `int8() int16() int32() int64() float32() float64() boolean() string() bytes() struct()
  array(value_schema) map(key_schema, value_schema) of(type)`; setters `optional() required()
  default_value(v) name(n) version(v) doc(d) parameter(k, v) parameters(m) field(name, schema)`.
- `Struct`: a structured value: `Struct(schema, {"id": 1})`, `Struct.of_values(schema,
  values)` (one value per field in order, checked whole), `put(name, value)` (checked at
  once, returns the struct), `get(name)` (the field's default when unset),
  `get_without_default(name)`, `validate()`, `to_dict()`.
- `Decimal`, `Date`, `Time`, `Timestamp`: the logical types, each with `LOGICAL_NAME`,
  `builder()`/`schema()` (`Decimal` takes the scale), `SCHEMA` (not for `Decimal`),
  `from_logical(schema, value)` and `to_logical(schema, raw)`.
- `SchemaAndValue`: a `(schema, value)` pair, what converters return; `SchemaAndValue.NULL`.
- `validate_value(schema, value)`: check any value against a schema; `is_logical(schema)`.

Python values per type: INT8..INT64 `int` (range checked, never `bool`); FLOAT32/FLOAT64
`float` (an `int` is accepted); BOOLEAN `bool`; STRING `str`; BYTES `bytes`/`bytearray`; ARRAY
`list`/`tuple`; MAP any `Mapping`; STRUCT `Struct` of the very same schema. The logical types
take the place of their underlying type: Decimal (BYTES, parameter `scale`) is a finite
`decimal.Decimal` (as in Connect, a scale other than the schema's is only refused when the value
is converted to bytes); Date (INT32 days since the epoch) a `datetime.date`;
Time (INT32 milliseconds of the day) a `datetime.time` (naive or UTC); Timestamp (INT64 epoch
milliseconds) a `datetime.datetime` (naive means UTC). Sub-millisecond digits are dropped.

A value that does not match raises `DataError`, naming where it is (`field "address.zip"`,
`field "lines[3]"`, `value`) and what was expected.
"""

from __future__ import annotations

import builtins
import dataclasses
import datetime as dt
import decimal
import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from spark_eos_connect.errors import DataError

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
    "is_logical",
    "validate_value",
]


class Type(enum.Enum):
    """A schema's type; the value is the name Connect uses in JSON schemas."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        """True for every type but ARRAY, MAP and STRUCT."""
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_PLAIN_CLASSES: dict[Type, type] = {
    **dict.fromkeys(_INT_BITS, int),
    Type.FLOAT32: float,
    Type.FLOAT64: float,
    Type.BOOLEAN: bool,
    Type.STRING: str,
    Type.BYTES: bytes,
}
"""The class of the values of a primitive type that `_check` can accept by class alone."""
_LOGICAL_NAMES: tuple[str, ...] = (
    "org.apache.kafka.connect.data.Decimal",
    "org.apache.kafka.connect.data.Date",
    "org.apache.kafka.connect.data.Time",
    "org.apache.kafka.connect.data.Timestamp",
)


@dataclass(frozen=True)
class Field:
    """One field of a struct schema: its name, position and schema."""

    name: str
    index: int
    schema: Schema


@dataclass(frozen=True)
class Schema:
    """An immutable Connect schema; build one with `SchemaBuilder` or the constructor.

    `default_value` None means no default. `parameters` is None or a non-empty insertion-ordered
    mapping (treat it as read-only). `fields` only for STRUCT, `key_schema` only for MAP,
    `value_schema` for ARRAY and MAP (both required there).
    """

    type: Type
    optional: bool = False
    default_value: Any = None
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: Mapping[str, str] | None = None
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    _by_name: dict[str, Field] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _plain: builtins.type | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )
    """The one Python class whose values pass `_check` at a glance (ints within `_bounds`)."""
    _bounds: tuple[int, int] | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )

    INT8: ClassVar[Schema]
    INT16: ClassVar[Schema]
    INT32: ClassVar[Schema]
    INT64: ClassVar[Schema]
    FLOAT32: ClassVar[Schema]
    FLOAT64: ClassVar[Schema]
    BOOLEAN: ClassVar[Schema]
    STRING: ClassVar[Schema]
    BYTES: ClassVar[Schema]
    OPTIONAL_INT8: ClassVar[Schema]
    OPTIONAL_INT16: ClassVar[Schema]
    OPTIONAL_INT32: ClassVar[Schema]
    OPTIONAL_INT64: ClassVar[Schema]
    OPTIONAL_FLOAT32: ClassVar[Schema]
    OPTIONAL_FLOAT64: ClassVar[Schema]
    OPTIONAL_BOOLEAN: ClassVar[Schema]
    OPTIONAL_STRING: ClassVar[Schema]
    OPTIONAL_BYTES: ClassVar[Schema]

    def __post_init__(self) -> None:
        if not isinstance(self.type, Type):
            raise DataError(f"schema type must be a Type, got {self.type!r}")
        params = None if not self.parameters else dict(self.parameters)
        object.__setattr__(self, "parameters", params)
        object.__setattr__(self, "fields", tuple(self.fields))
        self._check_shape()
        if self.name not in _LOGICAL_NAMES and self.type in _PLAIN_CLASSES:
            object.__setattr__(self, "_plain", _PLAIN_CLASSES[self.type])
            bits = _INT_BITS.get(self.type)
            if bits is not None:
                object.__setattr__(self, "_bounds", (-(2 ** (bits - 1)), 2 ** (bits - 1)))
        for position, f in enumerate(self.fields):
            if f.index != position:
                raise DataError(f"field {f.name!r} has index {f.index}, expected {position}")
            if f.name in self._by_name:
                raise DataError(f"duplicate field name {f.name!r}")
            self._by_name[f.name] = f
        if self.default_value is not None:
            try:
                _check(self, self.default_value, "")
            except DataError as error:
                raise DataError(f"Invalid default value: {error}") from None

    def _check_shape(self) -> None:
        if self.fields and self.type is not Type.STRUCT:
            raise DataError(f"only STRUCT schemas have fields, not {self.type.name}")
        if self.key_schema is not None and self.type is not Type.MAP:
            raise DataError(f"only MAP schemas have a key schema, not {self.type.name}")
        if self.value_schema is not None and self.type not in (Type.ARRAY, Type.MAP):
            raise DataError(f"only ARRAY and MAP schemas have a value schema, not {self.type.name}")
        if self.type is Type.ARRAY and self.value_schema is None:
            raise DataError("an ARRAY schema needs a value schema")
        if self.type is Type.MAP and (self.key_schema is None or self.value_schema is None):
            raise DataError("a MAP schema needs a key schema and a value schema")

    def __hash__(self) -> int:
        return hash((self.type, self.optional, self.name, self.version, self.fields))

    def __repr__(self) -> str:
        parts = [self.type.name]
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        if self.optional:
            parts.append("optional")
        if self.default_value is not None:
            parts.append(f"default={self.default_value!r}")
        if self.version is not None:
            parts.append(f"version={self.version}")
        if self.parameters:
            parts.append(f"parameters={self.parameters!r}")
        if self.fields:
            parts.append(
                "fields=[" + ", ".join(f"{f.name}: {f.schema!r}" for f in self.fields) + "]"
            )
        if self.key_schema is not None:
            parts.append(f"key={self.key_schema!r}")
        if self.value_schema is not None:
            parts.append(f"value={self.value_schema!r}")
        return f"Schema({', '.join(parts)})"

    def field(self, name: str) -> Field | None:
        """The struct field called `name`, or None; DataError for a non-struct schema."""
        if self.type is not Type.STRUCT:
            raise DataError(f"cannot look up fields on a {self.type.name} schema")
        return self._by_name.get(name)

    def validate(self, value: Any) -> None:
        """Raise `DataError` unless `value` matches this schema."""
        _check(self, value, "")


def _primitive(type_: Type, optional: bool = False) -> Schema:
    return Schema(type_, optional=optional)


for _type in Type:
    if _type.is_primitive:
        setattr(Schema, _type.name, _primitive(_type))
        setattr(Schema, f"OPTIONAL_{_type.name}", _primitive(_type, optional=True))


class SchemaBuilder:
    """Builds a `Schema` step by step, as Connect's `SchemaBuilder` does.

    Each setter returns the builder; setting an attribute twice to different values is an error.
    Wherever a schema is expected a builder is accepted too (it is built there).
    """

    def __init__(self, type_: Type) -> None:
        self._type = type_
        self._optional: bool | None = None
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] = {}
        self._fields: dict[str, Field] = {}
        self._key: Schema | None = None
        self._value: Schema | None = None

    @staticmethod
    def of(type_: Type) -> SchemaBuilder:
        """A builder for `type_` (ARRAY and MAP: use `array`/`map`)."""
        return SchemaBuilder(type_)

    @staticmethod
    def int8() -> SchemaBuilder:
        """An INT8 builder."""
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        """An INT16 builder."""
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        """An INT32 builder."""
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        """An INT64 builder."""
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        """A FLOAT32 builder."""
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        """A FLOAT64 builder."""
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        """A BOOLEAN builder."""
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        """A STRING builder."""
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        """A BYTES builder."""
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        """A STRUCT builder; add fields with `field`."""
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """An ARRAY builder whose elements have `value_schema`."""
        builder = SchemaBuilder(Type.ARRAY)
        builder._value = _built(value_schema)
        return builder

    @staticmethod
    def map(
        key_schema: Schema | SchemaBuilder, value_schema: Schema | SchemaBuilder
    ) -> SchemaBuilder:
        """A MAP builder from `key_schema` to `value_schema`."""
        builder = SchemaBuilder(Type.MAP)
        builder._key = _built(key_schema)
        builder._value = _built(value_schema)
        return builder

    @property
    def type(self) -> Type:
        """The type being built."""
        return self._type

    def _set(self, attribute: str, current: Any, new: Any) -> None:
        if current is not None and current != new:
            raise DataError(f"Invalid SchemaBuilder call: {attribute} has already been set")

    def optional(self) -> SchemaBuilder:
        """Null is allowed."""
        self._set("optional", self._optional, True)
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        """Null is not allowed (the default)."""
        self._set("optional", self._optional, False)
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        """The value used when a field is null; checked against the schema built so far."""
        self._set("default", self._default, value)
        try:
            _check(self._snapshot(None), value, "")
        except DataError as error:
            raise DataError(f"Invalid default value: {error}") from None
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        """The schema's name (logical types use their class name)."""
        self._set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        """The schema's version."""
        self._set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        """Documentation for the schema."""
        self._set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        """Add one string parameter (insertion order is kept)."""
        self._parameters[key] = value
        return self

    def parameters(self, parameters: Mapping[str, str]) -> SchemaBuilder:
        """Add several parameters."""
        self._parameters.update(parameters)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """Append a field to a STRUCT schema."""
        if self._type is not Type.STRUCT:
            raise DataError(f"Cannot create fields on type {self._type.name}")
        if not name:
            raise DataError("a field name cannot be empty")
        if name in self._fields:
            raise DataError(f"Cannot create field because of field name duplication {name}")
        self._fields[name] = Field(name, len(self._fields), _built(schema))
        return self

    def _snapshot(self, default: Any) -> Schema:
        return Schema(
            self._type,
            optional=bool(self._optional),
            default_value=default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters or None,
            fields=tuple(self._fields.values()),
            key_schema=self._key,
            value_schema=self._value,
        )

    def build(self) -> Schema:
        """The immutable `Schema`."""
        return self._snapshot(self._default)


def _built(schema: Schema | SchemaBuilder) -> Schema:
    if isinstance(schema, SchemaBuilder):
        return schema.build()
    if not isinstance(schema, Schema):
        raise DataError(f"expected a Schema, got {type(schema).__name__}")
    return schema


class Struct:
    """A structured value: one value per field of its STRUCT schema, checked on `put`. A
    struct checked whole (`validate`, or as another struct's field) is not checked again
    until a `put` changes it: a struct shared by many records is checked once."""

    __slots__ = ("_checked", "_schema", "_values")

    def __init__(self, schema: Schema, values: Mapping[str, Any] | None = None) -> None:
        if not isinstance(schema, Schema) or schema.type is not Type.STRUCT:
            raise DataError(f"Not a struct schema: {schema!r}")
        self._schema = schema
        self._checked = False
        self._values: list[Any] = [None] * len(schema.fields)
        for name, value in (values or {}).items():
            self.put(name, value)

    @property
    def schema(self) -> Schema:
        """The struct's schema."""
        return self._schema

    def _field(self, name: str) -> Field:
        found = self._schema.field(name)
        if found is None:
            known = ", ".join(f.name for f in self._schema.fields)
            raise DataError(f"{name} is not a valid field name (fields: {known})")
        return found

    def put(self, name: str, value: Any) -> Struct:
        """Set a field; raises `DataError` if `value` does not match the field's schema."""
        found = self._schema._by_name.get(name) or self._field(name)
        schema = found.schema
        if value.__class__ is not schema._plain or not _plainly_valid(schema, value):
            _check(schema, value, name)
        self._values[found.index] = value
        self._checked = False
        return self

    def get(self, name: str) -> Any:
        """The field's value, or its schema's default when unset."""
        found = self._field(name)
        value = self._values[found.index]
        return found.schema.default_value if value is None else value

    def get_without_default(self, name: str) -> Any:
        """The field's value as set (None when unset)."""
        return self._values[self._field(name).index]

    def validate(self) -> None:
        """Raise `DataError` if a required field without default is unset (or any is invalid)."""
        self._validate("")

    @classmethod
    def of_values(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct holding `values`, one per field in field order (None: unset), checked whole
        at once as `validate` checks it. The struct takes the list: do not change it after."""
        if not isinstance(schema, Schema) or schema.type is not Type.STRUCT:
            raise DataError(f"Not a struct schema: {schema!r}")
        if len(values) != len(schema.fields):
            raise DataError(
                f"{len(values)} values for the {len(schema.fields)} fields of {schema!r}"
            )
        struct = cls.__new__(cls)
        struct._schema = schema
        struct._values = values
        struct._checked = False
        struct._validate("")
        return struct

    def _validate(self, path: str) -> None:
        if self._checked:
            return
        for f, value in zip(self._schema.fields, self._values, strict=True):
            schema = f.schema
            if value is None:
                if schema.optional or schema.default_value is not None:
                    continue
            elif value.__class__ is schema._plain:
                bounds = schema._bounds  # (mypy narrows `value` to object here)
                if bounds is None or bounds[0] <= value < bounds[1]:  # type: ignore[operator]
                    continue
            elif (
                value.__class__ is Struct
                and value._checked
                and value._schema is schema
                and schema.name not in _LOGICAL_NAMES
            ):
                continue  # a struct checked whole, of this very schema
            _check(schema, value, _join(path, f.name))
        self._checked = True

    def values(self) -> list[Any]:
        """The values as set, in field order (None when unset; treat the list as read-only)."""
        return self._values

    def to_dict(self) -> dict[str, Any]:
        """Field name to value (defaults applied), nested structs as dicts too."""
        return {f.name: _plain(self.get(f.name)) for f in self._schema.fields}

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return ((f.name, self._values[f.index]) for f in self._schema.fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self._schema == other._schema and self._values == other._values

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ",".join(f"{name}={value!r}" for name, value in self if value is not None)
        return f"Struct{{{shown}}}"


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class SchemaAndValue:
    """A value with its schema (None for schemaless data), as converters return them."""

    schema: Schema | None
    value: Any

    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)


# --- logical types ------------------------------------------------------------------------------


def _require_logical(schema: Schema, logical_name: str, what: str) -> None:
    if schema.name != logical_name:
        raise DataError(
            f"Requested conversion of {what} but the schema is not {logical_name}: {schema!r}"
        )


class Decimal:
    """Logical type: an arbitrary-precision decimal of a fixed scale, as BYTES.

    The bytes are the unscaled value in big-endian two's complement (Java's
    `BigInteger.toByteArray`); the schema carries the scale as parameter `scale`.
    """

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        """A builder for a Decimal schema of `scale` (to make it optional, add a default...)."""
        return (
            SchemaBuilder.bytes()
            .name(Decimal.LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(scale))
            .version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        """The Decimal schema of `scale`."""
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        """The scale a Decimal schema declares."""
        text = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if text is None:
            raise DataError("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(text)
        except ValueError:
            raise DataError(f"Invalid scale parameter found in Decimal schema: {text!r}") from None

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal) -> bytes:
        """The unscaled value's bytes; the value's scale must be the schema's."""
        unscaled = _unscaled(value, Decimal.scale(schema))
        size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        return unscaled.to_bytes(size, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, raw: bytes) -> decimal.Decimal:
        """The decimal whose unscaled value is `raw`."""
        if not raw:
            raise DataError("Invalid Decimal bytes: empty")
        return _scaled(int.from_bytes(raw, "big", signed=True), Decimal.scale(schema))


def _unscaled(value: decimal.Decimal, scale: int) -> int:
    """The integer `value * 10**scale`; DataError unless `value` has exactly `scale`."""
    if not value.is_finite():
        raise DataError(f"Decimal value {value} is not finite")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    if -exponent != scale:
        raise DataError(
            "Decimal value has mismatching scale for given Decimal schema. "
            f"Schema has scale {scale}, value {value} has scale {-exponent}."
        )
    unscaled = int("".join(map(str, digits)) or "0")
    return -unscaled if sign else unscaled


def _scaled(unscaled: int, scale: int) -> decimal.Decimal:
    """`unscaled * 10**-scale` exactly, with that scale."""
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((1 if unscaled < 0 else 0, digits, -scale))


_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MS_PER_DAY = 86_400_000
"""Milliseconds in a day: Date values are whole days, Time values stay below it."""
_ONE_MS = dt.timedelta(milliseconds=1)


class Date:
    """Logical type: a calendar date as INT32 days since 1970-01-01 (`datetime.date`)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Date schema."""
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def schema() -> Schema:
        """The Date schema."""
        return Date.builder().build()

    @staticmethod
    def from_logical(schema: Schema, value: dt.date) -> int:
        """Days since the epoch."""
        _require_logical(schema, Date.LOGICAL_NAME, "a Date")
        if isinstance(value, dt.datetime):
            raise DataError("a Date value must be a datetime.date, not a datetime.datetime")
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, raw: int) -> dt.date:
        """The date `raw` days after the epoch."""
        _require_logical(schema, Date.LOGICAL_NAME, "a Date")
        try:
            return _EPOCH_DATE + dt.timedelta(days=raw)
        except OverflowError:
            raise DataError(f"Date value {raw} is out of Python's date range") from None


class Time:
    """Logical type: a time of day as INT32 milliseconds since midnight (`datetime.time`)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Time schema."""
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def schema() -> Schema:
        """The Time schema."""
        return Time.builder().build()

    @staticmethod
    def from_logical(schema: Schema, value: dt.time) -> int:
        """Milliseconds since midnight (UTC; a time with another UTC offset is refused)."""
        _require_logical(schema, Time.LOGICAL_NAME, "a Time")
        offset = value.utcoffset()
        if offset:
            raise DataError(f"a Time value must be in UTC, got offset {offset}")
        seconds = (value.hour * 60 + value.minute) * 60 + value.second
        return seconds * 1000 + value.microsecond // 1000

    @staticmethod
    def to_logical(schema: Schema, raw: int) -> dt.time:
        """The (naive, UTC) time of day `raw` milliseconds after midnight."""
        _require_logical(schema, Time.LOGICAL_NAME, "a Time")
        if not 0 <= raw < MS_PER_DAY:
            raise DataError(f"Time values must be milliseconds in [0, {MS_PER_DAY}), got {raw}")
        seconds, ms = divmod(raw, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return dt.time(hour, minute, second, ms * 1000)


class Timestamp:
    """Logical type: an instant as INT64 milliseconds since the epoch (`datetime.datetime`)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Timestamp schema."""
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def schema() -> Schema:
        """The Timestamp schema."""
        return Timestamp.builder().build()

    @staticmethod
    def from_logical(schema: Schema, value: dt.datetime) -> int:
        """Epoch milliseconds (a naive datetime is taken as UTC)."""
        _require_logical(schema, Timestamp.LOGICAL_NAME, "a Timestamp")
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // _ONE_MS

    @staticmethod
    def to_logical(schema: Schema, raw: int) -> dt.datetime:
        """The UTC datetime `raw` milliseconds after the epoch."""
        _require_logical(schema, Timestamp.LOGICAL_NAME, "a Timestamp")
        try:
            return _EPOCH + dt.timedelta(milliseconds=raw)
        except OverflowError:
            raise DataError(f"Timestamp value {raw} is out of Python's datetime range") from None


Date.SCHEMA = Date.schema()
Time.SCHEMA = Time.schema()
Timestamp.SCHEMA = Timestamp.schema()

assert _LOGICAL_NAMES == (
    Decimal.LOGICAL_NAME,
    Date.LOGICAL_NAME,
    Time.LOGICAL_NAME,
    Timestamp.LOGICAL_NAME,
)


def is_logical(schema: Schema | None) -> bool:
    """True when `schema` is one of the four logical types."""
    return schema is not None and schema.name in _LOGICAL_NAMES


# --- validation ---------------------------------------------------------------------------------


def validate_value(schema: Schema, value: Any) -> None:
    """Raise `DataError` unless `value` matches `schema` (null only if it is optional)."""
    _check(schema, value, "")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _where(path: str) -> str:
    if not path:
        return "value"
    if path.startswith("["):
        return f"value{path}"
    return f'field "{path}"'


def _expected(schema: Schema) -> str:
    """What a value of `schema` is in Python, for messages."""
    python = {
        Decimal.LOGICAL_NAME: "decimal.Decimal",
        Date.LOGICAL_NAME: "datetime.date",
        Time.LOGICAL_NAME: "datetime.time",
        Timestamp.LOGICAL_NAME: "datetime.datetime",
    }.get(schema.name or "")
    if python is None:
        bits = _INT_BITS.get(schema.type)
        if bits is not None:
            python = f"int in [{-(2 ** (bits - 1))}, {2 ** (bits - 1) - 1}]"
        else:
            python = {
                Type.FLOAT32: "float",
                Type.FLOAT64: "float",
                Type.BOOLEAN: "bool",
                Type.STRING: "str",
                Type.BYTES: "bytes",
                Type.ARRAY: "list",
                Type.MAP: "mapping",
                Type.STRUCT: "Struct",
            }[schema.type]
    named = f' "{schema.name}"' if schema.name else ""
    return f"schema{named} of type {schema.type.name} ({python})"


def _mismatch(schema: Schema, value: Any, path: str) -> DataError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return DataError(
        f"Invalid value for {_where(path)}: expected {_expected(schema)}, "
        f"got {type(value).__name__} {shown}"
    )


def _check_logical(schema: Schema, value: Any, path: str) -> bool:
    """Check a logical-type value; False if `schema` is not a logical type."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        if not isinstance(value, decimal.Decimal):
            raise _mismatch(schema, value, path)
        if not value.is_finite():
            raise DataError(f"Invalid value for {_where(path)}: {value} is not a finite decimal")
    elif name == Date.LOGICAL_NAME:
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise _mismatch(schema, value, path)
    elif name == Time.LOGICAL_NAME:
        if not isinstance(value, dt.time):
            raise _mismatch(schema, value, path)
        if value.utcoffset():
            raise DataError(f"Invalid value for {_where(path)}: a Time must be in UTC")
    elif name == Timestamp.LOGICAL_NAME:
        if not isinstance(value, dt.datetime):
            raise _mismatch(schema, value, path)
    else:
        return False
    return True


def _plainly_valid(schema: Schema, value: Any) -> bool:
    """Whether `value` is of its schema's plain class (and an int within bounds): valid."""
    bounds = schema._bounds
    if bounds is None:
        return value.__class__ is schema._plain
    return value.__class__ is int and bounds[0] <= value < bounds[1]


def _check(schema: Schema, value: Any, path: str) -> None:
    if value.__class__ is schema._plain and _plainly_valid(schema, value):
        return
    if value is None:
        if not schema.optional:
            raise DataError(
                f"Invalid value for {_where(path)}: null for a required {_expected(schema)}"
            )
        return
    if (
        value.__class__ is Struct
        and schema.type is Type.STRUCT
        and schema.name not in _LOGICAL_NAMES
    ):
        _check_struct(schema, value, path)
        return
    if _check_logical(schema, value, path):
        return
    kind = schema.type
    bits = _INT_BITS.get(kind)
    if bits is not None:
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
        ):
            raise _mismatch(schema, value, path)
    elif kind in (Type.FLOAT32, Type.FLOAT64):
        if not isinstance(value, float | int) or isinstance(value, bool):
            raise _mismatch(schema, value, path)
    elif kind is Type.BOOLEAN:
        if not isinstance(value, bool):
            raise _mismatch(schema, value, path)
    elif kind is Type.STRING:
        if not isinstance(value, str):
            raise _mismatch(schema, value, path)
    elif kind is Type.BYTES:
        if not isinstance(value, bytes | bytearray):
            raise _mismatch(schema, value, path)
    elif kind is Type.ARRAY:
        _check_array(schema, value, path)
    elif kind is Type.MAP:
        _check_map(schema, value, path)
    else:
        _check_struct(schema, value, path)


def _check_array(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, list | tuple):
        raise _mismatch(schema, value, path)
    assert schema.value_schema is not None
    for position, item in enumerate(value):
        _check(schema.value_schema, item, f"{path}[{position}]")


def _check_map(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        raise _mismatch(schema, value, path)
    assert schema.key_schema is not None and schema.value_schema is not None
    for key, item in value.items():
        _check(schema.key_schema, key, f"{path}[key {key!r}]")
        _check(schema.value_schema, item, f"{path}[{key!r}]")


def _check_struct(schema: Schema, value: Any, path: str) -> None:
    if not isinstance(value, Struct):
        raise _mismatch(schema, value, path)
    if value.schema is not schema and value.schema != schema:
        raise DataError(
            f"Invalid value for {_where(path)}: the Struct's schema {value.schema!r} is not the "
            f"field's schema {schema!r}"
        )
    value._validate(path)
