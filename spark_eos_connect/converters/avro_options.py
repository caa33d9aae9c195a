"""AvroConverter's AvroData options: Confluent's names and defaults (`AvroDataConfig`).

Each option is honoured as Confluent's AvroData honours it, or refused by name where this
project does not implement the non-default value (defaults in brackets):

- `enhanced.avro.schema.support` [false]: true makes enum-marked STRINGs Avro enums and names
  union fields of named branches by full name.
- `connect.meta.data` [true]: false writes and reads no `connect.*` properties.
- `scrub.invalid.names` [false]: false refuses a name Avro cannot have, as Avro does.
- `generalized.sum.type.support` [false]: true refused.
- `ignore.default.for.nullables` [false]: true writes a null optional field as null, not as
  its default.
- `allow.optional.map.keys` [false]: true makes optional STRING keys an Avro `map` too.
- `flatten.singleton.unions` [true]: false reads a one-branch union as a Union struct.
- `discard.type.doc.default` [false, deprecated]: true refused.
- `schemas.cache.config` [1000]: converted schemas remembered each way (at least 1).
- `avro.remove.java.properties` [false]: accepted; as in Confluent's AvroConverter it changes
  nothing (it acts only on Java objects, in KafkaAvroSerializer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.errors import ConfigError

__all__ = ["AVRO_DATA_CONFIG_DEF", "DEFAULT_OPTIONS", "AvroDataOptions", "avro_data_options"]

ENHANCED = "enhanced.avro.schema.support"
CONNECT_META_DATA = "connect.meta.data"
SCRUB_INVALID_NAMES = "scrub.invalid.names"
GENERALIZED_SUM_TYPES = "generalized.sum.type.support"
IGNORE_DEFAULT_FOR_NULLABLES = "ignore.default.for.nullables"
ALLOW_OPTIONAL_MAP_KEYS = "allow.optional.map.keys"
FLATTEN_SINGLETON_UNIONS = "flatten.singleton.unions"
DISCARD_TYPE_DOC_DEFAULT = "discard.type.doc.default"
SCHEMAS_CACHE_SIZE = "schemas.cache.config"
REMOVE_JAVA_PROPERTIES = "avro.remove.java.properties"

_REFUSED_TRUE = {
    GENERALIZED_SUM_TYPES: "generalized sum types (connect_union_N structs, index-valued enum "
    "parameters) are not implemented",
    DISCARD_TYPE_DOC_DEFAULT: "the deprecated doc and default handling is not implemented",
}

AVRO_DATA_CONFIG_DEF = (
    ConfigDef()
    .define(
        ENHANCED,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Avro enums for STRINGs with io.confluent.connect.avro.Enum parameters, and union "
        "fields named by full name (Confluent's default false: such STRINGs stay Avro strings).",
    )
    .define(
        CONNECT_META_DATA,
        ConfigType.BOOLEAN,
        True,
        None,
        "low",
        "Write and read the connect.* properties (name, version, doc, parameters, default).",
    )
    .define(
        SCRUB_INVALID_NAMES,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Replace characters Avro names cannot have (false: such a name is refused).",
    )
    .define(
        GENERALIZED_SUM_TYPES,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Confluent's generalized enum/union mapping; true is refused here.",
    )
    .define(
        IGNORE_DEFAULT_FOR_NULLABLES,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Write null for a null optional field value instead of the field's default.",
    )
    .define(
        ALLOW_OPTIONAL_MAP_KEYS,
        ConfigType.BOOLEAN,
        False,
        None,
        "low",
        "A MAP with optional STRING keys is an Avro map (false: an array of MapEntry records).",
    )
    .define(
        FLATTEN_SINGLETON_UNIONS,
        ConfigType.BOOLEAN,
        True,
        None,
        "low",
        "A one-branch Avro union reads as its branch (false: as a Union struct).",
    )
    .define(
        DISCARD_TYPE_DOC_DEFAULT,
        ConfigType.BOOLEAN,
        False,
        None,
        "low",
        "Deprecated in Confluent's AvroData; true is refused here.",
    )
    .define(
        SCHEMAS_CACHE_SIZE,
        ConfigType.INT,
        1000,
        None,
        "low",
        "Converted schemas remembered each way (at least 1).",
    )
    .define(
        REMOVE_JAVA_PROPERTIES,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Accepted for Confluent's configurations; changes nothing in AvroConverter (as in "
        "Confluent's).",
    )
)
"""The AvroData options AvroConverter reads besides the registry's."""


@dataclass(frozen=True)
class AvroDataOptions:
    """The AvroData options in force for one converter (Confluent's defaults)."""

    enhanced: bool = False
    connect_meta_data: bool = True
    scrub_invalid_names: bool = False
    ignore_default_for_nullables: bool = False
    allow_optional_map_keys: bool = False
    flatten_singleton_unions: bool = True
    cache_size: int = 1000


DEFAULT_OPTIONS = AvroDataOptions()
"""Confluent's defaults."""


def avro_data_options(parsed: Mapping[str, Any], prefix: str = "") -> AvroDataOptions:
    """The options of `parsed` (values parsed by `AVRO_DATA_CONFIG_DEF`); true for an option
    not implemented here is a `ConfigError` naming it."""
    for name, why in _REFUSED_TRUE.items():
        if parsed.get(name):
            raise ConfigError(
                f"{prefix}{name}=true is not supported by this AvroConverter: {why}; "
                f"leave it at false (Confluent's default)"
            )
    return AvroDataOptions(
        enhanced=bool(parsed.get(ENHANCED, False)),
        connect_meta_data=bool(parsed.get(CONNECT_META_DATA, True)),
        scrub_invalid_names=bool(parsed.get(SCRUB_INVALID_NAMES, False)),
        ignore_default_for_nullables=bool(parsed.get(IGNORE_DEFAULT_FOR_NULLABLES, False)),
        allow_optional_map_keys=bool(parsed.get(ALLOW_OPTIONAL_MAP_KEYS, False)),
        flatten_singleton_unions=bool(parsed.get(FLATTEN_SINGLETON_UNIONS, True)),
        cache_size=max(1, int(parsed.get(SCHEMAS_CACHE_SIZE, 1000))),
    )
