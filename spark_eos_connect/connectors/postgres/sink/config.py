"""`PostgresSink`'s options, with the Confluent JDBC sink's names, parsed into `PostgresSinkConfig`.

Pure Python (no database client): the connector, the registry and the docs share it. A
`connection.url` may be a JDBC URL (`jdbc:postgresql://host:port/db?...`) or a libpq one
(`postgresql://...`); `libpq_url` turns either into libpq's form. The password is a `Password`
and never appears in messages (`redacted_url` hides one written into the URL).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    NonEmptyString,
    Password,
    Range,
    ValidString,
)
from spark_eos_connect.errors import ConfigError

__all__ = [
    "CONFIG_DEF",
    "DEFAULT_KAFKA_PK_FIELDS",
    "DEFAULT_OFFSETS_TABLE",
    "InsertMode",
    "PkMode",
    "PostgresSinkConfig",
    "libpq_url",
    "parse_sink_config",
    "redacted_url",
    "table_name_for",
]

URL_CONFIG: Final = "connection.url"
USER_CONFIG: Final = "connection.user"
PASSWORD_CONFIG: Final = "connection.password"
INSERT_MODE_CONFIG: Final = "insert.mode"
PK_MODE_CONFIG: Final = "pk.mode"
PK_FIELDS_CONFIG: Final = "pk.fields"
DELETE_ENABLED_CONFIG: Final = "delete.enabled"
TABLE_FORMAT_CONFIG: Final = "table.name.format"
AUTO_CREATE_CONFIG: Final = "auto.create"
AUTO_EVOLVE_CONFIG: Final = "auto.evolve"
FIELDS_WHITELIST_CONFIG: Final = "fields.whitelist"
FIELDS_INCLUDE_CONFIG: Final = "fields.include"
FIELD_EXCLUDE_LIST_CONFIG: Final = "field.exclude.list"
BATCH_SIZE_CONFIG: Final = "batch.size"
OFFSETS_TABLE_CONFIG: Final = "offsets.table.name"
TOPICS_CONFIG: Final = "topics"

DEFAULT_OFFSETS_TABLE: Final = "__eosconnect_sink_offsets"
DEFAULT_KAFKA_PK_FIELDS: Final = ("__connect_topic", "__connect_partition", "__connect_offset")
"""The key columns of `pk.mode=kafka` when `pk.fields` is empty (Confluent's names)."""


class InsertMode(enum.Enum):
    """How records reach the table: INSERT, INSERT ... ON CONFLICT DO UPDATE, or UPDATE."""

    INSERT = "insert"
    UPSERT = "upsert"
    UPDATE = "update"


class PkMode(enum.Enum):
    """Where the primary key comes from."""

    NONE = "none"
    KAFKA = "kafka"
    RECORD_KEY = "record_key"
    RECORD_VALUE = "record_value"


CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        URL_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The database: a JDBC URL `jdbc:postgresql://host:port/db` or a libpq URL "
        "`postgresql://host:port/db` (query parameters such as `sslmode` pass to libpq).",
    )
    .define(
        USER_CONFIG,
        ConfigType.STRING,
        None,
        importance="high",
        doc="The database user (overrides one in the URL).",
    )
    .define(
        PASSWORD_CONFIG,
        ConfigType.PASSWORD,
        None,
        importance="high",
        doc="The user's password; `${provider:path:key}` references are resolved on the task.",
    )
    .define(
        INSERT_MODE_CONFIG,
        ConfigType.STRING,
        "insert",
        ValidString.one_of(*(m.value for m in InsertMode), case_insensitive=True),
        "high",
        "`insert` (COPY, a duplicate key fails), `upsert` (INSERT ... ON CONFLICT DO UPDATE) "
        "or `update` (UPDATE rows that exist). `upsert` and `update` need a `pk.mode`.",
    )
    .define(
        PK_MODE_CONFIG,
        ConfigType.STRING,
        "none",
        ValidString.one_of(*(m.value for m in PkMode), case_insensitive=True),
        "high",
        "The primary key: `none`, `kafka` (topic, partition, offset), `record_key` (the "
        "key, a primitive or a struct) or `record_value` (fields of the value).",
    )
    .define(
        PK_FIELDS_CONFIG,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="The key columns: for `kafka` three names (default `__connect_topic,"
        "__connect_partition,__connect_offset`); for `record_key` one name for a primitive key "
        "or the struct's fields to use (default all); for `record_value` the value's fields "
        "(default all).",
    )
    .define(
        DELETE_ENABLED_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance="medium",
        doc="Delete the row of a record with a null value (a tombstone); needs "
        "`pk.mode=record_key`.",
    )
    .define(
        TABLE_FORMAT_CONFIG,
        ConfigType.STRING,
        "${topic}",
        NonEmptyString(),
        "medium",
        "The table of each record, `${topic}` replaced by its topic; `schema.table` names "
        "a table outside the search path.",
    )
    .define(
        AUTO_CREATE_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance="medium",
        doc="Create a missing table from the record schema (CREATE TABLE with the key columns).",
    )
    .define(
        AUTO_EVOLVE_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance="medium",
        doc="Add missing columns (nullable) when a record schema has fields the table lacks.",
    )
    .define(
        FIELDS_WHITELIST_CONFIG,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="The value fields to write (default all); the key columns are always written.",
    )
    .define(
        FIELDS_INCLUDE_CONFIG,
        ConfigType.LIST,
        "",
        importance="low",
        doc="Another name for `fields.whitelist` (set one of them).",
    )
    .define(
        FIELD_EXCLUDE_LIST_CONFIG,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Value fields NOT to write (Debezium's JDBC sink's name; Confluent's has no "
        "exclusion): `field` for every topic, `topic:field` for one topic's records; names "
        "match literally. Key columns are always written.",
    )
    .define(
        BATCH_SIZE_CONFIG,
        ConfigType.INT,
        3000,
        Range.at_least(1),
        "medium",
        "The most rows one statement or COPY carries; every `put` is one transaction.",
    )
    .define(
        OFFSETS_TABLE_CONFIG,
        ConfigType.STRING,
        DEFAULT_OFFSETS_TABLE,
        NonEmptyString(),
        "low",
        "The table holding the next offset of each (connector, topic, partition), written in "
        "the same transaction as the rows (`schema.table` allowed).",
    )
    .define(
        TOPICS_CONFIG,
        ConfigType.LIST,
        None,
        importance="high",
        doc="The topics to read (the `eosconnect` reader's `topics` option).",
    )
)


@dataclass(frozen=True)
class PostgresSinkConfig:
    """Parsed `PostgresSink` options."""

    name: str
    url: str
    user: str | None
    password: Password | None
    insert_mode: InsertMode
    pk_mode: PkMode
    pk_fields: tuple[str, ...]
    delete_enabled: bool
    table_format: str
    auto_create: bool
    auto_evolve: bool
    fields: tuple[str, ...]
    excluded: tuple[str, ...]
    """`field.exclude.list`'s entries: `field` or `topic:field`."""
    batch_size: int
    offsets_table: str

    def connect_kwargs(self) -> dict[str, Any]:
        """`psycopg.connect` arguments: the libpq URL, the user and the password if set."""
        kwargs: dict[str, Any] = {"conninfo": libpq_url(self.url)}
        if self.user:
            kwargs["user"] = self.user
        if self.password is not None:
            kwargs["password"] = self.password.value
        return kwargs

    def excludes(self, topic: str, field: str) -> bool:
        """Whether `field.exclude.list` keeps the value field `field` of `topic`'s records out."""
        return field in self.excluded or f"{topic}:{field}" in self.excluded


_JDBC_PREFIX: Final = "jdbc:postgresql:"
_LIBPQ_SCHEMES: Final = ("postgresql://", "postgres://")


def libpq_url(url: str) -> str:
    """`url` as a libpq connection URI: `jdbc:postgresql://h:p/db?x=y` -> `postgresql://h:p/db?x=y`
    (and `jdbc:postgresql:db` -> `postgresql:///db`); a libpq URI is returned as it is."""
    text = url.strip()
    if text.startswith(_LIBPQ_SCHEMES):
        return text
    if text.startswith(_JDBC_PREFIX):
        rest = text[len(_JDBC_PREFIX) :]
        return "postgresql:" + rest if rest.startswith("//") else "postgresql:///" + rest
    raise ConfigError(
        f"Invalid value {redacted_url(text)!r} for configuration {URL_CONFIG}: expected "
        "jdbc:postgresql://host:port/database or postgresql://host:port/database"
    )


def redacted_url(url: str) -> str:
    """`url` with any password (in the user info or a `password` parameter) shown as `***`."""
    shown = re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", url)
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", shown)


def table_name_for(table_format: str, topic: str) -> str:
    """The table of a record from `topic`."""
    return table_format.replace("${topic}", topic)


def _fields(values: Mapping[str, Any]) -> tuple[str, ...]:
    whitelist, include = values[FIELDS_WHITELIST_CONFIG], values[FIELDS_INCLUDE_CONFIG]
    if whitelist and include and whitelist != include:
        raise InvalidConfigError(
            {
                FIELDS_INCLUDE_CONFIG: [
                    f"{FIELDS_INCLUDE_CONFIG} and {FIELDS_WHITELIST_CONFIG} name the same "
                    "setting; set only one of them"
                ]
            }
        )
    return tuple(whitelist or include)


def _check_modes(config: PostgresSinkConfig) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    if config.insert_mode is not InsertMode.INSERT and config.pk_mode is PkMode.NONE:
        problems[INSERT_MODE_CONFIG] = [
            f"{INSERT_MODE_CONFIG}={config.insert_mode.value} needs a primary key: set "
            f"{PK_MODE_CONFIG} to kafka, record_key or record_value"
        ]
    if config.delete_enabled and config.pk_mode is not PkMode.RECORD_KEY:
        problems[DELETE_ENABLED_CONFIG] = [
            f"{DELETE_ENABLED_CONFIG}=true needs {PK_MODE_CONFIG}=record_key "
            f"(not {config.pk_mode.value}): a tombstone is identified by its key"
        ]
    if config.pk_mode is PkMode.KAFKA and config.pk_fields and len(config.pk_fields) != 3:
        problems[PK_FIELDS_CONFIG] = [
            f"{PK_FIELDS_CONFIG} for {PK_MODE_CONFIG}=kafka must name 3 columns (topic, "
            f"partition, offset), not {len(config.pk_fields)}"
        ]
    if config.pk_mode is PkMode.NONE and config.pk_fields:
        problems[PK_FIELDS_CONFIG] = [
            f"{PK_FIELDS_CONFIG} is set but {PK_MODE_CONFIG}=none uses no key columns"
        ]
    if "${" in config.table_format.replace("${topic}", ""):
        problems[TABLE_FORMAT_CONFIG] = [
            f"{TABLE_FORMAT_CONFIG} {config.table_format!r}: only ${{topic}} can be replaced"
        ]
    return problems


def parse_sink_config(props: Mapping[str, Any]) -> PostgresSinkConfig:
    """The typed options; `InvalidConfigError` lists every problem, modes that do not go
    together included. The connector's `name` is required (it keys the offsets table)."""
    values = CONFIG_DEF.parse(props)
    name = str(props.get("name") or "").strip()
    if not name:
        raise InvalidConfigError({"name": ["PostgresSink needs the connector's name"]})
    libpq_url(values[URL_CONFIG])
    config = PostgresSinkConfig(
        name=name,
        url=values[URL_CONFIG],
        user=values[USER_CONFIG] or None,
        password=values[PASSWORD_CONFIG],
        insert_mode=InsertMode(values[INSERT_MODE_CONFIG].lower()),
        pk_mode=PkMode(values[PK_MODE_CONFIG].lower()),
        pk_fields=tuple(values[PK_FIELDS_CONFIG]),
        delete_enabled=values[DELETE_ENABLED_CONFIG],
        table_format=values[TABLE_FORMAT_CONFIG],
        auto_create=values[AUTO_CREATE_CONFIG],
        auto_evolve=values[AUTO_EVOLVE_CONFIG],
        fields=_fields(values),
        excluded=tuple(values[FIELD_EXCLUDE_LIST_CONFIG]),
        batch_size=values[BATCH_SIZE_CONFIG],
        offsets_table=values[OFFSETS_TABLE_CONFIG],
    )
    problems = _check_modes(config)
    if problems:
        raise InvalidConfigError(problems)
    return config
