"""Delta columns from a Schema Registry converter's schemas (`value.converter=AvroConverter` or
`JsonSchemaConverter`).

The driver looks at the schema ids of a micro-batch's values, asks the registry for their Connect
schemas and merges their fields by name in order of appearance (a field added by a later
version is a new, nullable column; a value written with an older version has null there). The
executors decode the values with the converter (`mapInArrow`) into one struct column of those
fields and an error column naming why a value could not be read, for `errors.tolerance`/DLQ.
Connect types become Spark's: INT8..INT64 `tinyint`..`bigint`, FLOAT32/FLOAT64 `float`/`double`,
BOOLEAN, STRING `string`, BYTES `binary`, Decimal `decimal(p, s)` (p from
`connect.decimal.precision`, at most 38), Date `date`, Time `int` (milliseconds of the day),
Timestamp `timestamp`, ARRAY `array`, MAP `map`, STRUCT `struct`.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from spark_eos_connect.api.config import props_with_prefix
from spark_eos_connect.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type
from spark_eos_connect.converters import Converter, make_converter
from spark_eos_connect.converters.registry_converter import SchemaRegistryConverter
from spark_eos_connect.errors import ConfigError, DataError

__all__ = [
    "VALUE_CONVERTER",
    "decoded_rows",
    "registry_converter",
    "spark_type",
    "value_columns",
]

VALUE_CONVERTER = "value.converter"
MAX_PRECISION = 38
_CONVERTERS: dict[tuple[tuple[str, str], ...], Converter] = {}
_LOCK = threading.Lock()


def registry_converter(options: Mapping[str, Any]) -> SchemaRegistryConverter:
    """The `value.converter` of `options` (with its `value.converter.*` options), which must
    be a Schema Registry converter; one per process and options."""
    name = str(options[VALUE_CONVERTER])
    settings = props_with_prefix(options, f"{VALUE_CONVERTER}.")
    key = (("", name), *sorted((k, str(v)) for k, v in settings.items()))
    with _LOCK:
        found = _CONVERTERS.get(key)
        if found is None:
            found = _CONVERTERS[key] = make_converter(name, settings, is_key=False)
    if not isinstance(found, SchemaRegistryConverter):
        raise ConfigError(
            f"DeltaSink reads {VALUE_CONVERTER}={name} only for the Schema Registry converters "
            "(AvroConverter, JsonSchemaConverter), whose schemas give the table its columns; "
            "for JSON values use value.schema"
        )
    return found


def spark_type(schema: Schema) -> Any:
    """The Spark SQL type of a Connect schema."""
    from pyspark.sql import types as T

    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        params = schema.parameters or {}
        precision = min(int(params.get("connect.decimal.precision", MAX_PRECISION)), MAX_PRECISION)
        return T.DecimalType(precision, Decimal.scale(schema))
    if name == Date.LOGICAL_NAME:
        return T.DateType()
    if name == Timestamp.LOGICAL_NAME:
        return T.TimestampType()
    kind = schema.type
    simple = {
        Type.INT8: T.ByteType,
        Type.INT16: T.ShortType,
        Type.INT32: T.IntegerType,
        Type.INT64: T.LongType,
        Type.FLOAT32: T.FloatType,
        Type.FLOAT64: T.DoubleType,
        Type.BOOLEAN: T.BooleanType,
        Type.STRING: T.StringType,
        Type.BYTES: T.BinaryType,
    }
    if kind in simple:
        return simple[kind]()
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        return T.ArrayType(spark_type(schema.value_schema), True)
    if kind is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return T.MapType(spark_type(schema.key_schema), spark_type(schema.value_schema), True)
    return T.StructType([T.StructField(f.name, spark_type(f.schema), True) for f in schema.fields])


def value_columns(schemas: list[Schema]) -> Any:
    """The struct type of the table's data columns: the fields of `schemas` merged by name in
    order of appearance, all nullable (a STRUCT each; other values are one column `value`)."""
    from pyspark.sql import types as T

    fields: dict[str, Any] = {}
    for schema in schemas:
        if schema.type is not Type.STRUCT:
            fields.setdefault("value", T.StructField("value", spark_type(schema), True))
            continue
        for f in schema.fields:
            column = T.StructField(f.name, spark_type(f.schema), True)
            known = fields.setdefault(f.name, column)
            if known.dataType != column.dataType:
                raise DataError(
                    f"Field {f.name!r} is {known.dataType.simpleString()} in one schema of the "
                    f"batch and {column.dataType.simpleString()} in another: a Delta column has "
                    "one type"
                )
    reserved = [n for n in fields if n.startswith(("_kafka_", "_eosconnect_"))]
    if reserved:
        raise DataError(f"value fields may not start with _kafka_ or _eosconnect_: {reserved}")
    return T.StructType(list(fields.values()))


def _arrow_type(spark: Any) -> Any:
    """The Arrow type of a Spark type built by `spark_type`."""
    import pyarrow as pa
    from pyspark.sql import types as T

    simple = {
        T.ByteType: pa.int8(),
        T.ShortType: pa.int16(),
        T.IntegerType: pa.int32(),
        T.LongType: pa.int64(),
        T.FloatType: pa.float32(),
        T.DoubleType: pa.float64(),
        T.BooleanType: pa.bool_(),
        T.StringType: pa.string(),
        T.BinaryType: pa.binary(),
        T.DateType: pa.date32(),
        T.TimestampType: pa.timestamp("us", tz="UTC"),
    }
    for kind, arrow in simple.items():
        if isinstance(spark, kind):
            return arrow
    if isinstance(spark, T.DecimalType):
        return pa.decimal128(spark.precision, spark.scale)
    if isinstance(spark, T.ArrayType):
        return pa.list_(_arrow_type(spark.elementType))
    if isinstance(spark, T.MapType):
        return pa.map_(_arrow_type(spark.keyType), _arrow_type(spark.valueType))
    return pa.struct([pa.field(f.name, _arrow_type(f.dataType)) for f in spark.fields])


def _plain(schema: Schema | None, value: Any) -> Any:
    """A Connect value as Arrow takes it for the column `spark_type(schema)` gives."""
    if value is None or schema is None:
        return value
    if schema.name == Time.LOGICAL_NAME and isinstance(value, dt.time):
        return Time.from_logical(schema, value)
    if isinstance(value, Struct):
        return {f.name: _plain(f.schema, value.get(f.name)) for f in schema.fields}
    if schema.type is Type.ARRAY:
        return [_plain(schema.value_schema, v) for v in value]
    if schema.type is Type.MAP:
        return [
            (_plain(schema.key_schema, k), _plain(schema.value_schema, v)) for k, v in value.items()
        ]
    return value


def _row(schema: Schema | None, value: Any) -> dict[str, Any]:
    if isinstance(value, Struct):
        assert schema is not None
        return {f.name: _plain(f.schema, value.get(f.name)) for f in schema.fields}
    return {"value": _plain(schema, value)}


def decoded_rows(df: Any, options: Mapping[str, Any], parsed: str, error: str) -> Any:
    """Driver: `df` (Kafka rows) with a struct column `parsed` of each value's fields and a
    string column `error` (null for values read), decoded on the executors."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    converter = registry_converter(options)
    ids = {
        int.from_bytes(bytes(row[0]), "big")
        for row in df.where(F.col("value").isNotNull() & (F.length("value") >= 5))
        .select(F.substring("value", 2, 4))
        .distinct()
        .collect()
    }
    schemas = []
    for schema_id in sorted(ids):
        try:
            schemas.append(converter.connect_schema(schema_id))
        except DataError:
            continue  # its records fail one by one, with the registry's answer
    columns = value_columns(schemas)
    out_schema = T.StructType(
        [
            *df.schema.fields,
            T.StructField(parsed, columns, True),
            T.StructField(error, T.StringType(), True),
        ]
    )
    arrow_columns = _arrow_type(columns)
    settings = dict(options)

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        reader = registry_converter(settings)
        for batch in batches:
            topics = batch.column(batch.schema.get_field_index("topic")).to_pylist()
            values = batch.column(batch.schema.get_field_index("value")).to_pylist()
            rows: list[dict[str, Any] | None] = []
            errors: list[str | None] = []
            for topic, data in zip(topics, values, strict=True):
                if data is None:
                    rows.append(None)
                    errors.append(None)
                    continue
                try:
                    read = reader.to_connect_data(topic, data)
                    rows.append(_row(read.schema, read.value))
                    errors.append(None)
                except Exception as failure:
                    rows.append(None)
                    errors.append(f"{type(failure).__name__}: {failure}")
            arrays = [
                *batch.columns,
                pa.array(rows, arrow_columns),
                pa.array(errors, pa.string()),
            ]
            names = [*batch.schema.names, parsed, error]
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return df.mapInArrow(decode, out_schema)
