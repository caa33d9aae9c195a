"""PostgresCdcSource's options, named as Debezium's PostgreSQL connector names them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    NonEmptyString,
    Password,
    Range,
    ValidString,
)
from spark_eos_connect.connectors.postgres.cdc.database import ConnectionSettings
from spark_eos_connect.connectors.postgres.cdc.filters import CaptureFilter
from spark_eos_connect.connectors.postgres.cdc.value_options import define_value_options
from spark_eos_connect.errors import ConfigError

__all__ = ["CONFIG_DEF", "UNSUPPORTED", "capture_filter", "connection_settings"]

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

TABLE_EXCLUDE_LIST: Final = "table.exclude.list"
SCHEMA_INCLUDE_LIST: Final = "schema.include.list"
SCHEMA_EXCLUDE_LIST: Final = "schema.exclude.list"
COLUMN_INCLUDE_LIST: Final = "column.include.list"
COLUMN_EXCLUDE_LIST: Final = "column.exclude.list"
MESSAGE_KEY_COLUMNS: Final = "message.key.columns"
PUBLICATION_AUTOCREATE_MODE: Final = "publication.autocreate.mode"
PUBLISH_VIA_PARTITION_ROOT: Final = "publish.via.partition.root"
SLOT_DROP_ON_STOP: Final = "slot.drop.on.stop"
SKIPPED_OPERATIONS: Final = "skipped.operations"
HEARTBEAT_INTERVAL_MS: Final = "heartbeat.interval.ms"
HEARTBEAT_ACTION_QUERY: Final = "heartbeat.action.query"
HEARTBEAT_TOPIC_PREFIX: Final = "topic.heartbeat.prefix"
PROVIDE_TRANSACTION_METADATA: Final = "provide.transaction.metadata"
TRANSACTION_TOPIC: Final = "topic.transaction"

SNAPSHOT_INITIAL: Final = "initial"
SNAPSHOT_NO_DATA: Final = "no_data"
SNAPSHOT_NEVER: Final = "never"
SNAPSHOT_WHEN_NEEDED: Final = "when_needed"
SNAPSHOT_INITIAL_ONLY: Final = "initial_only"
SNAPSHOT_ALWAYS: Final = "always"

PUBLICATION_ALL_TABLES: Final = "all_tables"
PUBLICATION_FILTERED: Final = "filtered"
PUBLICATION_DISABLED: Final = "disabled"
PUBLICATION_NO_TABLES: Final = "no_tables"


@dataclass(frozen=True)
class Unsupported:
    """A Debezium option this connector does not implement: accepted only at Debezium's
    default (`default`), refused by name otherwise."""

    default: str
    why: str

    def __call__(self, name: str, value: Any) -> None:
        if str(value).strip().lower() != self.default:
            raise ConfigError(
                f"{name}={value!r} is not supported by PostgresCdcSource ({self.why}); "
                f"remove it or set it to {self.default!r}"
            )

    def __str__(self) -> str:
        return f"only {self.default!r} (not supported)"


@dataclass(frozen=True)
class ValidSubset:
    """A list whose every element is one of `values`."""

    values: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        wrong = [item for item in value or () if item not in self.values]
        if wrong:
            raise ConfigError(f"{name}: {', '.join(wrong)} not among {', '.join(self.values)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "] (a list)"


UNSUPPORTED: Final[dict[str, Unsupported]] = {
    "signal.data.collection": Unsupported("", "signals are not read"),
    "signal.enabled.channels": Unsupported("source", "signals are not read"),
    "incremental.snapshot.chunk.size": Unsupported("1024", "no incremental snapshots"),
    "snapshot.select.statement.overrides": Unsupported("", "snapshots read whole tables"),
    "snapshot.include.collection.list": Unsupported("", "snapshots read every captured table"),
    "database.initial.statements": Unsupported("", "sessions run no extra statements"),
    "include.unknown.datatypes": Unsupported(
        "false", "columns of a type Debezium has no schema for are left out, as by default"
    ),
    "column.propagate.source.type": Unsupported("", "schemas carry no source type parameters"),
    "datatype.propagate.source.type": Unsupported("", "schemas carry no source type parameters"),
    "converters": Unsupported("", "custom value converters are not loaded"),
    "event.processing.failure.handling.mode": Unsupported(
        "fail", "a change that cannot be read fails the task"
    ),
    "event.converting.failure.handling.mode": Unsupported(
        "fail", "a value that cannot be converted fails the task, naming table, column and LSN"
    ),
    "snapshot.max.threads": Unsupported("1", "one snapshot reader"),
    "snapshot.delay.ms": Unsupported("0", "the snapshot starts at once"),
    "streaming.delay.ms": Unsupported("0", "streaming starts at once"),
    "slot.stream.params": Unsupported("", "the slot is read with pgoutput's own options"),
    "replica.identity.autoset.values": Unsupported("", "replica identities are not changed"),
    "database.sslmode": Unsupported("prefer", "TLS options are not passed to the server"),
}
"""Debezium options a user may set that this connector does not implement."""

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
        "SELECT on the captured tables, and to create the publication unless it exists (a "
        "superuser for publication.autocreate.mode=all_tables, CREATE on the database for "
        "filtered).",
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
        SLOT_DROP_ON_STOP,
        ConfigType.BOOLEAN,
        False,
        importance="low",
        doc="True: the connector drops its slot when it stops (its query stops, or it is "
        "stopped, restarted or deleted), so the server keeps no WAL for it; for tests and "
        "development. Changes made before the next start are then lost to the slot: that "
        "start takes a new snapshot with snapshot.mode=when_needed and fails naming the "
        "missing slot otherwise.",
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
        "empty captures every table (but those `table.exclude.list` names). Tables created "
        "later that match are captured from their first change.",
    )
    .define(
        TABLE_EXCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching `schema.table` names of tables not to capture "
        "(not with `table.include.list`).",
    )
    .define(
        SCHEMA_INCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching the schemas whose tables are captured (empty: all).",
    )
    .define(
        SCHEMA_EXCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching schemas whose tables are not captured (not with "
        "`schema.include.list`).",
    )
    .define(
        COLUMN_INCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching `schema.table.column`: only those columns are in "
        "`before` and `after` (empty: all).",
    )
    .define(
        COLUMN_EXCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance="medium",
        doc="Regular expressions matching `schema.table.column` of columns left out of "
        "`before` and `after` (not with `column.include.list`).",
    )
    .define(
        MESSAGE_KEY_COLUMNS,
        ConfigType.STRING,
        "",
        importance="medium",
        doc="The key of tables without a primary key (or another key): "
        "`<schema.table regex>:<column>,<column>;...`. A table with neither has a null key.",
    )
    .define(
        PUBLICATION_AUTOCREATE_MODE,
        ConfigType.STRING,
        PUBLICATION_ALL_TABLES,
        ValidString.one_of(
            PUBLICATION_ALL_TABLES,
            PUBLICATION_FILTERED,
            PUBLICATION_DISABLED,
            PUBLICATION_NO_TABLES,
        ),
        importance="medium",
        doc="When `publication.name` is missing: `all_tables` creates it `FOR ALL TABLES` "
        "(a superuser's right; tables created later are captured at once), `filtered` for "
        "the captured tables (and sets an existing one's tables to them at each start), "
        "`no_tables` with no table, `disabled` fails. Under a FOR ALL TABLES publication "
        "PostgreSQL refuses UPDATE and DELETE on tables without a replica identity: use "
        "`filtered` where such tables exist.",
    )
    .define(
        PUBLISH_VIA_PARTITION_ROOT,
        ConfigType.BOOLEAN,
        False,
        importance="medium",
        doc="True: a partitioned table is captured as one table (its partitions' changes "
        "under its own topic, the publication `publish_via_partition_root`); false: each "
        "partition is a table of its own and the partitioned parent has no topic.",
    )
    .define(
        SKIPPED_OPERATIONS,
        ConfigType.LIST,
        "t",
        ValidSubset(("c", "u", "d", "t", "none")),
        importance="low",
        doc="Operations not emitted: `c` inserts, `u` updates, `d` deletes; the list must keep "
        "`t` (truncate events are not emitted here, so a list without it is refused).",
    )
    .define(
        HEARTBEAT_INTERVAL_MS,
        ConfigType.INT,
        0,
        Range.at_least(0),
        importance="medium",
        doc="While no captured change comes, a heartbeat record this often (0: never) on "
        "`<topic.heartbeat.prefix>.<topic.prefix>`; its offset lets the slot move past the "
        "WAL read so far once Kafka holds it.",
    )
    .define(
        HEARTBEAT_ACTION_QUERY,
        ConfigType.STRING,
        "",
        importance="low",
        doc="A statement run on the database before each heartbeat (e.g. an update of a "
        "captured table, so that a quiet database still gives changes).",
    )
    .define(
        HEARTBEAT_TOPIC_PREFIX,
        ConfigType.STRING,
        "__debezium-heartbeat",
        NonEmptyString(),
        importance="low",
        doc="The heartbeat topic's prefix.",
    )
    .define(
        PROVIDE_TRANSACTION_METADATA,
        ConfigType.BOOLEAN,
        False,
        importance="low",
        doc="Write a BEGIN and an END record per database transaction to "
        "`<topic.prefix>.<topic.transaction>` and fill each event's `transaction` block.",
    )
    .define(
        TRANSACTION_TOPIC,
        ConfigType.STRING,
        "transaction",
        NonEmptyString(),
        importance="low",
        doc="The transaction metadata topic's name after `<topic.prefix>.`.",
    )
    .define(
        SNAPSHOT_MODE,
        ConfigType.STRING,
        SNAPSHOT_INITIAL,
        ValidString.one_of(
            SNAPSHOT_INITIAL,
            SNAPSHOT_NO_DATA,
            SNAPSHOT_NEVER,
            SNAPSHOT_WHEN_NEEDED,
            SNAPSHOT_INITIAL_ONLY,
            SNAPSHOT_ALWAYS,
        ),
        importance="medium",
        doc="`initial`: emit every row (op `r`) of the captured tables as of the slot's "
        "creation, then stream; `no_data` (or `never`): stream only, from an existing slot's "
        "position when there is one; `when_needed`: as `initial`, and a new snapshot when "
        "the slot of committed offsets is gone; `initial_only`: the snapshot, no streaming; "
        "`always`: a fresh snapshot at every start, then stream from the committed offsets.",
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

define_value_options(CONFIG_DEF)

for _name, _refusal in UNSUPPORTED.items():
    CONFIG_DEF.define(
        _name,
        ConfigType.STRING,
        None,
        _refusal,
        importance="low",
        doc=f"Debezium's option, not supported: {_refusal.why}.",
    )


def capture_filter(config: dict[str, Any]) -> CaptureFilter:
    """The tables and columns to capture, from parsed options."""
    return CaptureFilter.from_lists(
        schema_include=config[SCHEMA_INCLUDE_LIST],
        schema_exclude=config[SCHEMA_EXCLUDE_LIST],
        table_include=config[TABLE_INCLUDE_LIST],
        table_exclude=config[TABLE_EXCLUDE_LIST],
        column_include=config[COLUMN_INCLUDE_LIST],
        column_exclude=config[COLUMN_EXCLUDE_LIST],
        key_columns=config[MESSAGE_KEY_COLUMNS],
    )


def skipped_operations(config: dict[str, Any]) -> frozenset[str]:
    """The ops (`c`, `u`, `d`) `skipped.operations` leaves out; refuses a list without `t`,
    which would ask for truncate events this connector does not emit."""
    skipped = frozenset(op for op in config[SKIPPED_OPERATIONS] if op != "none")
    if "t" not in skipped:
        raise ConfigError(
            f"{SKIPPED_OPERATIONS}={','.join(config[SKIPPED_OPERATIONS])!r} asks for truncate "
            "events, which PostgresCdcSource does not emit; keep 't' in the list"
        )
    return skipped


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
