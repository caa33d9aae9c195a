"""The PostgreSQL side of the CDC source: checks, the publication, the slot, the snapshot reads
and the slot reads (psycopg 3). Every function takes an open connection; nothing here decides
what to emit.

Sessions run with `TimeZone=UTC` and `DateStyle=ISO` so that text values read the same from a
snapshot query as from pgoutput. The slot is read without consuming it
(`pg_logical_slot_peek_binary_changes`) and advanced only by `advance_slot`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.connectors.postgres.cdc.filters import CaptureFilter
from spark_eos_connect.connectors.postgres.cdc.pgoutput import parse_lsn
from spark_eos_connect.connectors.postgres.cdc.schemas import ColumnInfo, TableInfo
from spark_eos_connect.connectors.postgres.cdc.types import load_types
from spark_eos_connect.errors import ConfigError, EosConnectError

__all__ = [
    "CdcSetupError",
    "SlotState",
    "advance_slot",
    "check_server",
    "connect",
    "create_slot_with_snapshot",
    "describe_relation",
    "drop_slot",
    "drop_slot_when_free",
    "ensure_publication",
    "flushed_lsn",
    "list_tables",
    "open_snapshot",
    "peek_changes",
    "publication_tables",
    "read_table",
    "read_values_as_text",
    "slot_state",
]

SESSION_OPTIONS: Final = (
    "-c TimeZone=UTC -c DateStyle=ISO -c bytea_output=hex -c IntervalStyle=iso_8601 "
    "-c lc_monetary=C -c extra_float_digits=1"
)
TEXT_CATEGORY: Final = "S"


class CdcSetupError(EosConnectError, RuntimeError):
    """The database is not set up for change data capture; the message says what to change."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """How to reach the database (Debezium's `database.*` options)."""

    host: str
    port: int
    user: str
    password: str
    dbname: str

    def conninfo(self, replication: bool = False) -> str:
        """Keyword arguments for `psycopg.connect`, as a libpq string."""
        from psycopg.conninfo import make_conninfo

        extra = {"replication": "database"} if replication else {}
        return make_conninfo(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=self.dbname,
            options=SESSION_OPTIONS,
            application_name="eosconnect-postgres-cdc",
            **extra,
        )


def connect(settings: ConnectionSettings, replication: bool = False) -> Any:
    """An autocommit connection (a replication one when asked)."""
    import psycopg

    try:
        return psycopg.connect(settings.conninfo(replication), autocommit=True)
    except psycopg.OperationalError as error:
        raise CdcSetupError(
            f"cannot connect to PostgreSQL at {settings.host}:{settings.port} database "
            f"{settings.dbname} as {settings.user}: {str(error).strip()}"
        ) from error


def check_server(connection: Any) -> None:
    """Fail clearly unless `wal_level=logical` and the user may replicate."""
    (wal_level,) = connection.execute("SHOW wal_level").fetchone()
    if wal_level != "logical":
        raise CdcSetupError(
            f"PostgreSQL's wal_level is {wal_level!r}; change data capture needs "
            "wal_level=logical (set it in postgresql.conf and restart the server)"
        )
    user, may = connection.execute(
        "SELECT current_user, rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if not may:
        raise CdcSetupError(
            f"user {user!r} lacks the REPLICATION privilege that logical decoding needs "
            f"(ALTER ROLE {user} REPLICATION)"
        )


_TABLES_SQL: Final = """
SELECT n.nspname::text, c.relname::text, c.oid::int, c.relkind::text, c.relispartition
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_%'
 ORDER BY n.nspname, c.relname
"""

_TABLE_SQL: Final = """
SELECT c.oid::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %s AND c.relname = %s
"""

_KEY_SQL: Final = """
SELECT array_agg(a.attname::text ORDER BY k.ord)
  FROM pg_index i
  CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
 WHERE i.indrelid = %s AND i.indisprimary
"""

_COLUMNS_SQL: Final = """
SELECT a.attname::text, a.atttypid::int, a.atttypmod, NOT a.attnotnull
  FROM pg_attribute a
 WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
 ORDER BY a.attnum
"""
"""A table's columns as pgoutput sends them: stored generated columns are left out."""

_PARTITIONS_SQL: Final = """
SELECT n.nspname::text, c.relname::text
  FROM pg_partition_tree(%s) t JOIN pg_class c ON c.oid = t.relid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE t.isleaf
"""


def _key_of(
    capture: CaptureFilter, schema: str, name: str, primary: Sequence[str], names: Sequence[str]
) -> tuple[str, ...]:
    """The columns keying a table's events: `message.key.columns`' for it, else its primary
    key, else none (a null key)."""
    override = capture.key_override(schema, name)
    if override is not None:
        missing = [column for column in override if column not in names]
        if missing:
            raise ConfigError(
                f"message.key.columns names {', '.join(missing)} for {schema}.{name}, which "
                f"has no such column (its columns: {', '.join(names)})"
            )
        return tuple(override)
    return tuple(primary) if all(column in names for column in primary) else ()


def _table_info(
    connection: Any,
    capture: CaptureFilter,
    schema: str,
    name: str,
    oid: int | None,
    shape: Sequence[tuple[str, int, int]] | None = None,
) -> TableInfo:
    """A table as the catalog describes it now; with `shape` (pgoutput's columns: name, type,
    modifier), those columns, their nullability and key taken from the catalog where the
    column still exists there (a column dropped since is optional)."""
    current: list[tuple[str, int, int, bool]] = []
    primary: list[str] = []
    if oid is not None:
        current = connection.execute(_COLUMNS_SQL, (oid,)).fetchall()
        (key,) = connection.execute(_KEY_SQL, (oid,)).fetchone()
        primary = list(key or ())
    if shape is None:
        listed = [(column, type_oid, modifier) for column, type_oid, modifier, _ in current]
    else:
        listed = list(shape)
    optional = {column: nullable for column, _, _, nullable in current}
    types = load_types(connection, {type_oid for _, type_oid, _ in listed})
    columns = tuple(
        ColumnInfo(
            column,
            type_oid,
            modifier,
            optional.get(column, True),
            types.get(type_oid),
        )
        for column, type_oid, modifier in listed
    )
    names = [column.name for column in columns]
    return TableInfo(schema, name, columns, _key_of(capture, schema, name, primary, names))


def list_tables(connection: Any, capture: CaptureFilter, via_root: bool) -> list[TableInfo]:
    """The captured tables, in name order: with `via_root` a partitioned table stands for its
    partitions; without, each partition is a table and a partitioned one holds no rows.
    Raises `ConfigError` when nothing matches, or when a partitioned table matches without
    `via_root` but none of its partitions do (its rows would reach no topic)."""
    found: list[TableInfo] = []
    orphaned: list[str] = []
    rows = connection.execute(_TABLES_SQL).fetchall()
    for schema, name, oid, kind, is_partition in rows:
        if not capture.captures_table(schema, name):
            continue
        if via_root and is_partition:
            continue
        if not via_root and kind == "p":
            leaves = connection.execute(_PARTITIONS_SQL, (oid,)).fetchall()
            if leaves and not any(capture.captures_table(s, n) for s, n in leaves):
                orphaned.append(f"{schema}.{name}")
            continue
        found.append(_table_info(connection, capture, schema, name, oid))
    if orphaned:
        raise ConfigError(
            f"partitioned tables {', '.join(orphaned)} are captured but none of their "
            "partitions are: set publish.via.partition.root=true to capture each as one "
            "table, or include its partitions in the table filters"
        )
    if not found:
        raise ConfigError(
            "the table filters match no table"
            + (" (table.include.list, table.exclude.list, schema.*)" if capture.narrowed else "")
        )
    return found


def describe_relation(
    connection: Any,
    capture: CaptureFilter,
    schema: str,
    name: str,
    shape: Sequence[tuple[str, int, int]],
) -> TableInfo:
    """A table pgoutput describes (a Relation message) with the catalog's key and
    nullability; the table may have changed or gone since the change was made."""
    row = connection.execute(_TABLE_SQL, (schema, name)).fetchone()
    return _table_info(connection, capture, schema, name, None if row is None else row[0], shape)


def _ident(*parts: str) -> Any:
    from psycopg import sql

    return sql.Identifier(*parts)


def ensure_publication(
    connection: Any, name: str, mode: str, tables: Sequence[TableInfo], via_root: bool
) -> None:
    """Create or check publication `name` as Debezium's `publication.autocreate.mode` says:
    `all_tables` creates it `FOR ALL TABLES`, `filtered` for `tables` (and sets an existing
    one's tables to them), `no_tables` with none, `disabled` requires it. An existing
    publication must publish via partition roots exactly when `via_root` asks for it."""
    from psycopg import sql

    found = connection.execute(
        "SELECT puballtables, pubviaroot FROM pg_publication WHERE pubname = %s", (name,)
    ).fetchone()
    listed = sql.SQL(", ").join(_ident(t.schema, t.name) for t in tables)
    if found is None:
        if mode == "disabled":
            raise CdcSetupError(
                f"publication {name!r} does not exist and publication.autocreate.mode=disabled; "
                f"create it (CREATE PUBLICATION {name} FOR ...) or choose another mode"
            )
        target = {
            "all_tables": sql.SQL(" FOR ALL TABLES"),
            "filtered": sql.SQL(" FOR TABLE {}").format(listed),
            "no_tables": sql.SQL(""),
        }[mode]
        options = sql.SQL(" WITH (publish_via_partition_root = true)" if via_root else "")
        statement = sql.SQL("CREATE PUBLICATION {}").format(_ident(name)) + target + options
        _run_publication_statement(connection, statement, name, mode)
        return
    all_tables, publishes_via_root = found
    if bool(publishes_via_root) != via_root:
        raise CdcSetupError(
            f"publication {name!r} has publish_via_partition_root={str(publishes_via_root).lower()}"
            f" but publish.via.partition.root={str(via_root).lower()}: partitions' changes would "
            f"reach the wrong topics; ALTER PUBLICATION {name} SET (publish_via_partition_root = "
            f"{str(via_root).lower()}) or change the option"
        )
    if mode == "filtered":
        if all_tables:
            raise CdcSetupError(
                f"publication {name!r} is FOR ALL TABLES and cannot be narrowed to the "
                "captured tables (publication.autocreate.mode=filtered); drop it or use "
                "publication.autocreate.mode=all_tables"
            )
        statement = sql.SQL("ALTER PUBLICATION {} SET TABLE {}").format(_ident(name), listed)
        _run_publication_statement(connection, statement, name, mode)


def _run_publication_statement(connection: Any, statement: Any, name: str, mode: str) -> None:
    import psycopg

    try:
        connection.execute(statement)
    except psycopg.errors.InsufficientPrivilege as error:
        raise CdcSetupError(
            f"cannot create or alter publication {name!r} "
            f"(publication.autocreate.mode={mode}): {str(error).strip()}; FOR ALL TABLES "
            "needs a superuser: create the publication yourself or use "
            "publication.autocreate.mode=filtered"
        ) from error


def publication_tables(connection: Any, name: str) -> set[str]:
    """`schema.table` of every table publication `name` publishes now."""
    rows = connection.execute(
        "SELECT schemaname::text, tablename::text FROM pg_publication_tables WHERE pubname = %s",
        (name,),
    ).fetchall()
    return {f"{schema}.{table}" for schema, table in rows}


@dataclass(frozen=True, slots=True)
class SlotState:
    """A replication slot as `pg_replication_slots` shows it."""

    plugin: str | None
    database: str | None
    active_pid: int | None
    confirmed_flush_lsn: int | None


def slot_state(connection: Any, slot: str) -> SlotState | None:
    """The slot named `slot`, None when there is none."""
    row = connection.execute(
        "SELECT plugin, database, active_pid, confirmed_flush_lsn::text "
        "FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    ).fetchone()
    if row is None:
        return None
    plugin, database, pid, confirmed = row
    return SlotState(plugin, database, pid, None if confirmed is None else parse_lsn(confirmed))


def check_slot(state: SlotState | None, slot: str, dbname: str) -> SlotState:
    """Fail clearly unless `state` is a free pgoutput slot of database `dbname`."""
    if state is None:
        raise CdcSetupError(
            f"replication slot {slot!r} does not exist although offsets were committed for it "
            "(dropped by hand, or by slot.drop.on.stop=true when the connector stopped): the "
            "changes since then are lost to it; set snapshot.mode=when_needed or reset the "
            "connector's offsets to take a new snapshot"
        )
    if state.plugin != "pgoutput" or state.database != dbname:
        raise CdcSetupError(
            f"replication slot {slot!r} belongs to plugin {state.plugin} on database "
            f"{state.database}, not to pgoutput on {dbname}; choose another slot.name"
        )
    if state.active_pid is not None:
        raise CdcSetupError(
            f"replication slot {slot!r} is in use by process {state.active_pid} (another "
            "connector or a replication client reads it); each connector needs its own slot.name"
        )
    return state


def drop_slot(connection: Any, slot: str) -> None:
    """Drop the slot if it exists."""
    connection.execute(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    )


SLOT_RELEASE_WAIT_S = 10.0
"""How long `drop_slot_when_free` waits for a reader to release the slot before it ends the
reader's session."""


def drop_slot_when_free(connection: Any, slot: str, wait_s: float = SLOT_RELEASE_WAIT_S) -> bool:
    """Drop the slot if it exists; a session reading it is given `wait_s` to let go, then
    ended (`pg_terminate_backend`) and given as long again. Whether a slot was dropped."""
    import psycopg

    deadline, terminated = time.monotonic() + wait_s, False
    while True:
        row = connection.execute(
            "SELECT active_pid FROM pg_replication_slots WHERE slot_name = %s", (slot,)
        ).fetchone()
        if row is None:
            return False
        (reader,) = row
        if reader is None:
            try:
                drop_slot(connection, slot)
                return True
            except psycopg.errors.ObjectInUse:
                pass  # a reader took it meanwhile
        elif time.monotonic() >= deadline:
            if terminated:
                raise CdcSetupError(
                    f"replication slot {slot!r} is still read by session {reader} after it "
                    "was ended; it is not dropped"
                )
            connection.execute("SELECT pg_terminate_backend(%s)", (reader,))
            deadline, terminated = time.monotonic() + wait_s, True
        time.sleep(0.1)


def create_slot_with_snapshot(settings: ConnectionSettings, slot: str) -> tuple[int, Any]:
    """Create logical slot `slot` (pgoutput) and open a transaction on a new connection that
    sees the database exactly as of the slot's consistent point: every transaction that commits
    later is in the slot, every one that committed earlier in the snapshot.

    The slot is created with `CREATE_REPLICATION_SLOT ... (SNAPSHOT 'export')` on a replication
    connection, and the exported snapshot is imported (`SET TRANSACTION SNAPSHOT`) by a
    REPEATABLE READ transaction before that connection issues anything else. Returns the
    consistent point and the connection whose transaction holds the snapshot.
    """
    import psycopg

    replication = connect(settings, replication=True)
    try:
        try:
            row = replication.execute(
                f"CREATE_REPLICATION_SLOT \"{slot}\" LOGICAL pgoutput (SNAPSHOT 'export')"
            ).fetchone()
        except psycopg.errors.DuplicateObject as error:
            raise CdcSetupError(f"replication slot {slot!r} exists already") from error
        except psycopg.errors.InsufficientPrivilege as error:
            raise CdcSetupError(
                f"user {settings.user!r} may not create replication slots (REPLICATION "
                f"privilege): {error}"
            ) from error
        consistent_point, snapshot_name = parse_lsn(row[1]), row[2]
        reader = connect(settings)
        reader.autocommit = False
        reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        reader.execute(f"SET TRANSACTION SNAPSHOT '{snapshot_name}'")
        read_values_as_text(reader)
        return consistent_point, reader
    finally:
        replication.close()


def open_snapshot(settings: ConnectionSettings) -> tuple[str, int, Any]:
    """A fresh REPEATABLE READ transaction for a resumed snapshot: its visibility
    (`pg_current_snapshot()`), the WAL position right after it was taken, and its connection."""
    reader = connect(settings)
    reader.autocommit = False
    reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    (visibility,) = reader.execute("SELECT pg_current_snapshot()::text").fetchone()
    (lsn,) = reader.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    read_values_as_text(reader)
    return visibility, parse_lsn(lsn), reader


def read_values_as_text(connection: Any) -> None:
    """Make `connection` hand every column value over as its type's output text, which is
    what pgoutput sends (a `::text` cast differs: it trims `char(n)`, adds `inet`'s mask)."""
    from psycopg.types.string import TextLoader

    for (oid,) in connection.execute("SELECT oid::int FROM pg_type").fetchall():
        connection.adapters.register_loader(oid, TextLoader)


def read_table(
    connection: Any,
    table: TableInfo,
    after: tuple[str, ...] | None,
    categories: dict[str, str],
    fetch_size: int,
) -> Iterator[tuple[str | None, ...]]:
    """The rows of `table` as output text (`read_values_as_text` must have been called on
    `connection`), in primary key order (text keys compared byte-wise, `COLLATE "C"`), only
    those after key `after` when given; a server-side cursor. A table without a key is read
    in no particular order and cannot start after a key."""
    from psycopg import sql

    def key_expr(name: str) -> Any:  # qualified: the output columns have the same names
        if categories.get(name) == TEXT_CATEGORY:
            return sql.SQL('{} COLLATE "C"').format(_ident("t", name))
        return _ident("t", name)

    columns = sql.SQL(", ").join(_ident("t", c.name) for c in table.columns)
    query = sql.SQL("SELECT {} FROM {} AS t").format(columns, _ident(table.schema, table.name))
    params: list[Any] = []
    if table.key:
        order = sql.SQL(", ").join(key_expr(name) for name in table.key)
        if after is not None:
            types = {c.name: c for c in table.columns}
            bound = sql.SQL(", ").join(
                sql.SQL("CAST(%s AS {})").format(sql.SQL(_type_name(connection, types[name])))
                for name in table.key
            )
            query += sql.SQL(" WHERE ({}) > ({})").format(order, bound)
            params = list(after)
        query += sql.SQL(" ORDER BY {}").format(order)
    elif after is not None:
        raise CdcSetupError(
            f"the snapshot of {table.qualified}, a table without a primary key, was cut by a "
            "crash and cannot resume where it stopped (no key orders its rows): give it a "
            "key with message.key.columns or a primary key, or reset the connector's offsets"
        )
    with connection.cursor(name=f"snapshot_{table.name[:40]}") as cursor:
        cursor.itersize = fetch_size
        cursor.execute(query, params or None)
        yield from cursor


def _type_name(connection: Any, column: ColumnInfo) -> str:
    (name,) = connection.execute(
        "SELECT format_type(%s, %s)", (column.type_oid, column.type_modifier)
    ).fetchone()
    return str(name)


def key_categories(connection: Any, table: TableInfo) -> dict[str, str]:
    """The type category (`pg_type.typcategory`) of each primary key column."""
    oids = {c.name: c.type_oid for c in table.columns if c.name in table.key}
    rows = connection.execute(
        "SELECT oid::int, typcategory FROM pg_type WHERE oid = ANY(%s)", (list(oids.values()),)
    ).fetchall()
    by_oid = {int(oid): category for oid, category in rows}  # text when read as text
    return {name: by_oid.get(oid, "") for name, oid in oids.items()}


_PEEK_SQL: Final = """
SELECT xid, data, end_lsn > %(after)s::pg_lsn, total
  FROM (SELECT p.xid::text::bigint AS xid, p.data, p.n,
               max(p.lsn) OVER (PARTITION BY p.xid::text::bigint) AS end_lsn,
               count(*) OVER () AS total
          FROM pg_logical_slot_peek_binary_changes(
                 %(slot)s, NULL, %(limit)s, 'proto_version', '1', 'publication_names', %(pub)s)
               WITH ORDINALITY AS p(lsn, xid, data, n)) AS t
 WHERE end_lsn > %(after)s::pg_lsn OR n = 1
 ORDER BY n
"""


def peek_changes(
    connection: Any, slot: str, publication: str, max_rows: int, after_lsn: int = 0
) -> tuple[list[tuple[int, bytes]], int]:
    """The pgoutput messages (`(xid, message)` pairs, whole transactions) of the transactions
    that end after `after_lsn`, among the first `max_rows` or so the slot decodes from its
    confirmed position, without consuming them; and how many messages it decoded.

    The server still decodes from the slot's position, but what an earlier read of this task
    already has (transactions ending at or before `after_lsn`) is neither sent nor parsed
    again. A transaction's messages carry the LSNs of its changes, which can lie before the
    end of a transaction committed earlier: it is kept or left out whole, by its largest LSN
    (that of its commit, the end LSN)."""
    from spark_eos_connect.connectors.postgres.cdc.pgoutput import format_lsn

    params = {
        "slot": slot,
        "limit": max_rows,
        "pub": publication,
        "after": format_lsn(after_lsn),
    }
    rows = connection.execute(_PEEK_SQL, params).fetchall()
    total = int(rows[0][3]) if rows else 0
    return [(int(xid), bytes(data)) for xid, data, new, _ in rows if new], total


def flushed_lsn(connection: Any) -> int:
    """`pg_current_wal_flush_lsn()`: a peek started after it decodes at least that far."""
    (lsn,) = connection.execute("SELECT pg_current_wal_flush_lsn()::text").fetchone()
    return parse_lsn(lsn)


def advance_slot(connection: Any, slot: str, lsn: int) -> None:
    """Move the slot's confirmed position to `lsn` (never backwards: PostgreSQL ignores that)."""
    from spark_eos_connect.connectors.postgres.cdc.pgoutput import format_lsn

    connection.execute(
        "SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (slot, format_lsn(lsn))
    )
