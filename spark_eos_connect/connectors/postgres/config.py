"""PostgresCdcSource's options, named as Debezium's PostgreSQL connector names them."""

from __future__ import annotations

from typing import Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    NonEmptyString,
    Password,
    Range,
    ValidString,
)
from spark_eos_connect.connectors.postgres.database import ConnectionSettings

__all__ = ["CONFIG_DEF", "connection_settings"]

HOSTNAME: Final = "database.hostname"
PORT: Final = "database.port"
USER: Final = "database.user"
PASSWORD: Final = "database.password"
DBNAME: Final = "database.dbname"
TOPIC_PREFIX: Final = "topic.prefix"
SLOT_NAME: Final = "slot.name"
PUBLICATION_NAME: Final = "publication.name"
TABLE_INCLUDE_LIST: Final = "table.include.list"
SNAPSHOT_MODE: Final = "snapshot.mode"
TOMBSTONES_ON_DELETE: Final = "tombstones.on.delete"
MAX_BATCH_SIZE: Final = "max.batch.size"
SNAPSHOT_FETCH_SIZE: Final = "snapshot.fetch.size"
PLUGIN_NAME: Final = "plugin.name"

SNAPSHOT_INITIAL: Final = "initial"
SNAPSHOT_NO_DATA: Final = "no_data"

CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        HOSTNAME,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The PostgreSQL server's host name or address.",
    )
    .define(
        PORT,
        ConfigType.INT,
        5432,
        Range.between(1, 65535),
        importance="high",
        doc="The PostgreSQL server's port.",
    )
    .define(
        USER,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The user to connect as; it needs the REPLICATION privilege (or superuser), "
        "SELECT on the captured tables, and CREATE on the database unless the publication "
        "exists.",
    )
    .define(PASSWORD, ConfigType.PASSWORD, "", importance="high", doc="The user's password.")
    .define(
        DBNAME,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The database to capture changes of.",
    )
    .define(
        TOPIC_PREFIX,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="Prefix of the topics (`<topic.prefix>.<schema>.<table>`), the server name in "
        'each event\'s `source.name` and the source partition (`{"server": ...}`).',
    )
    .define(
        SLOT_NAME,
        ConfigType.STRING,
        "debezium",
        NonEmptyString(),
        importance="medium",
        doc="The logical replication slot the connector creates and reads (pgoutput); no "
        "other client may use it.",
    )
    .define(
        PUBLICATION_NAME,
        ConfigType.STRING,
        "dbz_publication",
        NonEmptyString(),
        importance="medium",
        doc="The publication to decode with; created for the captured tables when missing.",
    )
    .define(
        TABLE_INCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching `schema.table` names in full (comma-separated); "
        "empty captures every table. Each table needs a primary key.",
    )
    .define(
        SNAPSHOT_MODE,
        ConfigType.STRING,
        SNAPSHOT_INITIAL,
        ValidString.one_of(SNAPSHOT_INITIAL, SNAPSHOT_NO_DATA),
        importance="medium",
        doc="`initial`: emit every row (op `r`) of the captured tables as of the slot's "
        "creation, then stream; `no_data`: stream only.",
    )
    .define(
        TOMBSTONES_ON_DELETE,
        ConfigType.BOOLEAN,
        True,
        importance="medium",
        doc="Follow each delete event with a tombstone (the key, a null value).",
    )
    .define(
        MAX_BATCH_SIZE,
        ConfigType.INT,
        2048,
        Range.at_least(1),
        importance="low",
        doc="About how many records one poll returns (whole database transactions).",
    )
    .define(
        SNAPSHOT_FETCH_SIZE,
        ConfigType.INT,
        10240,
        Range.at_least(1),
        importance="low",
        doc="Rows fetched per round trip while reading the snapshot.",
    )
    .define(
        PLUGIN_NAME,
        ConfigType.STRING,
        "pgoutput",
        ValidString.one_of("pgoutput"),
        importance="low",
        doc="The logical decoding plugin; only `pgoutput`.",
    )
)
"""Every option of PostgresCdcSource."""


def connection_settings(config: dict[str, Any]) -> ConnectionSettings:
    """Where the database is, from parsed options."""
    password = config[PASSWORD]
    return ConnectionSettings(
        config[HOSTNAME],
        config[PORT],
        config[USER],
        password.value if isinstance(password, Password) else str(password or ""),
        config[DBNAME],
    )
