"""A throwaway PostgreSQL cluster for tests and examples: `initdb` + `pg_ctl` from the machine's
PostgreSQL package, on a free localhost port, removed on close.

The cluster runs with `wal_level=logical` (logical decoding needs it) and room for replication
slots and WAL senders. PostgreSQL refuses to run as root, so when the current user is root the
server's processes run as the `postgres` OS user (the Debian package creates it) and its data folder
is created in a temporary folder that user owns. Durability is traded for speed (`fsync=off`): the
cluster is meant to be thrown away. Clients log in over TCP as a superuser with a password
(`scram-sha-256`); `create_database` gives each test a fresh database.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.broker import free_port

__all__ = ["PG_BIN_ENV", "PostgresCluster", "PostgresDatabase", "find_bin_dir"]

PG_BIN_ENV: Final = "EOSCONNECT_PG_BIN"
"""Names the folder holding `initdb` and `pg_ctl` when they are somewhere unusual."""

_SERVER_USER: Final = "postgres"
_HOST: Final = "127.0.0.1"
_TOOLS: Final = ("initdb", "pg_ctl")

SERVER_SETTINGS: Final[dict[str, str]] = {
    "listen_addresses": _HOST,
    "wal_level": "logical",
    "max_replication_slots": "32",
    "max_wal_senders": "32",
    "max_connections": "100",
    "fsync": "off",
    "full_page_writes": "off",
    "shared_buffers": "64MB",
}
"""`postgresql.conf` settings of every throwaway cluster (the port and socket folder are added).
Commits stay synchronous: logical decoding reads only flushed WAL, so with `synchronous_commit=off`
a committed transaction could be missing from a slot read right after it."""


def _has_tools(folder: str | Path) -> bool:
    return all(os.access(Path(folder) / tool, os.X_OK) for tool in _TOOLS)


def _version_key(folder: str) -> tuple[int, ...]:
    version = Path(folder).parent.name
    if not re.fullmatch(r"\d+(?:\.\d+)*", version):
        return ()
    return tuple(int(part) for part in version.split("."))


def find_bin_dir(
    env: dict[str, str] | None = None, debian_root: str = "/usr/lib/postgresql"
) -> Path:
    """The folder holding `initdb` and `pg_ctl`: `$EOSCONNECT_PG_BIN`, else the newest Debian
    package's (`/usr/lib/postgresql/<version>/bin`), else `pg_config --bindir`, else wherever
    `initdb` is on the PATH. Raises `SetupError` naming the package to install."""
    environ = os.environ if env is None else env
    named = environ.get(PG_BIN_ENV)
    if named:
        if not _has_tools(named):
            raise SetupError(f"{PG_BIN_ENV}={named} holds no initdb and pg_ctl")
        return Path(named)
    packaged = sorted(glob.glob(f"{debian_root}/*/bin"), key=_version_key, reverse=True)
    for folder in packaged:
        if _has_tools(folder):
            return Path(folder)
    pg_config = shutil.which("pg_config", path=environ.get("PATH"))
    if pg_config:
        result = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if result.returncode == 0 and _has_tools(result.stdout.strip()):
            return Path(result.stdout.strip())
    initdb = shutil.which("initdb", path=environ.get("PATH"))
    if initdb and _has_tools(Path(initdb).resolve().parent):
        return Path(initdb).resolve().parent
    raise SetupError(
        "PostgreSQL's initdb and pg_ctl were not found: install the server package "
        f"(`apt-get install -y postgresql-15`, which `make setup` does) or set {PG_BIN_ENV}"
    )


@dataclass(frozen=True)
class PostgresDatabase:
    """Where a client finds one database of the cluster, and the superuser to log in as."""

    host: str
    port: int
    user: str
    password: str
    dbname: str

    @property
    def dsn(self) -> str:
        """A libpq connection string (`host=... port=... ...`)."""
        return (
            f"host={self.host} port={self.port} user={self.user} "
            f"password={self.password} dbname={self.dbname}"
        )

    def connector_options(self) -> dict[str, str]:
        """The `database.*` options a CDC connector (PostgresCdcSource, Debezium) reaches this
        database with."""
        return {
            "database.hostname": self.host,
            "database.port": str(self.port),
            "database.user": self.user,
            "database.password": self.password,
            "database.dbname": self.dbname,
        }

    def connect(self, autocommit: bool = True, **kwargs: Any) -> Any:
        """A psycopg connection to this database (autocommit unless told otherwise)."""
        import psycopg

        return psycopg.connect(self.dsn, autocommit=autocommit, **kwargs)

    def execute(self, *statements: str) -> None:
        """Run statements, each in its own autocommitted transaction."""
        with self.connect() as connection:
            for statement in statements:
                connection.execute(statement)


class PostgresCluster:
    """A PostgreSQL server in a temporary folder: `start()`, `create_database()`, `close()`.

    Usable as a context manager. `user`/`password` name the superuser clients log in as over TCP.
    """

    def __init__(
        self,
        port: int | None = None,
        user: str = "eosconnect",
        password: str = "eosconnect",
        settings: dict[str, str] | None = None,
        bin_dir: Path | None = None,
        start_timeout_s: int = 60,
    ) -> None:
        self.host = _HOST
        self.port = port or free_port()
        self.user = user
        self.password = password
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        self.bin_dir = bin_dir
        self.start_timeout_s = start_timeout_s
        self.base_dir: Path | None = None
        self._run_as: str | None = None
        self._running = False
        self.created: list[str] = []
        """Names of the databases `create_database` made, oldest first."""

    @property
    def data_dir(self) -> Path:
        """The cluster's data folder (set by `start`)."""
        if self.base_dir is None:
            raise SetupError("the PostgreSQL cluster has not been started")
        return self.base_dir / "data"

    @property
    def log_file(self) -> Path:
        """The server's log."""
        return self.data_dir.parent / "server.log"

    def database(self, dbname: str = "postgres") -> PostgresDatabase:
        """Connection details of database `dbname` as the superuser."""
        return PostgresDatabase(self.host, self.port, self.user, self.password, dbname)

    @property
    def dsn(self) -> str:
        """The connection string of the `postgres` maintenance database."""
        return self.database().dsn

    def _run(self, *command: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            user=self._run_as,
            group=self._run_as and pwd.getpwnam(self._run_as).pw_gid,
            cwd=self.base_dir,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
            check=False,
        )
        if result.returncode != 0:
            raise SetupError(
                f"{Path(command[0]).name} failed ({result.returncode}): "
                f"{(result.stderr or result.stdout)[-2000:]}{self._log_tail()}"
            )
        return result

    def _log_tail(self) -> str:
        try:
            return "\nserver log:\n" + self.log_file.read_text(errors="replace")[-2000:]
        except (OSError, SetupError):
            return ""

    def _prepare_base_dir(self) -> Path:
        base = Path(tempfile.mkdtemp(prefix="eosconnect-pg-"))
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam(_SERVER_USER)
            except KeyError as exc:
                shutil.rmtree(base, ignore_errors=True)
                raise SetupError(
                    f"PostgreSQL refuses to run as root and there is no {_SERVER_USER!r} user "
                    "to run it as (the postgresql package creates it)"
                ) from exc
            os.chown(base, account.pw_uid, account.pw_gid)
            self._run_as = _SERVER_USER
        return base

    def start(self) -> PostgresCluster:
        """`initdb`, write the settings, and `pg_ctl start` waiting until it accepts logins."""
        bin_dir = self.bin_dir or find_bin_dir()
        self.base_dir = self._prepare_base_dir()
        try:
            password_file = self.base_dir / "password"
            password_file.write_text(self.password + "\n")
            if self._run_as:
                account = pwd.getpwnam(self._run_as)
                os.chown(password_file, account.pw_uid, account.pw_gid)
            self._run(
                str(bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                self.user,
                f"--pwfile={password_file}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            )
            password_file.unlink()
            settings = {
                **self.settings,
                "port": str(self.port),
                "unix_socket_directories": str(self.base_dir),
            }
            with (self.data_dir / "postgresql.conf").open("a") as conf:
                for name, value in settings.items():
                    conf.write(f"{name} = {_quoted(value)}\n")
            self._run(
                str(bin_dir / "pg_ctl"),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-w",
                "-t",
                str(self.start_timeout_s),
                "start",
            )
            self._running = True
            self.bin_dir = bin_dir
        except BaseException:
            self.close()
            raise
        return self

    def create_database(self, prefix: str = "db") -> PostgresDatabase:
        """A new, empty database with a unique name."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        self.database().execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return self.database(name)

    def drop_database(self, dbname: str, timeout_s: float = 30.0) -> None:
        """Drop `dbname` with its replication slots (a slot outlives its clients and holds one of
        `max_replication_slots` and the WAL it has not confirmed). Sessions still connected, a
        slot's reader among them, are ended first."""
        import psycopg

        deadline = time.monotonic() + timeout_s
        with self.database().connect() as connection:
            while True:
                connection.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (dbname,),
                )
                try:
                    connection.execute(
                        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        "WHERE database = %s",
                        (dbname,),
                    )
                    break
                except psycopg.errors.ObjectInUse:  # its reader has not gone yet
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            connection.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        with contextlib.suppress(ValueError):
            self.created.remove(dbname)

    def close(self) -> None:
        """Stop the server at once (`pg_ctl stop -m immediate`) and delete its folder."""
        if self._running and self.bin_dir is not None:
            self._running = False
            with contextlib.suppress(SetupError):  # already gone: the folder goes anyway
                pg_ctl = str(self.bin_dir / "pg_ctl")
                self._run(pg_ctl, "-D", str(self.data_dir), "-m", "immediate", "stop")
        base, self.base_dir = self.base_dir, None
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self if self._running else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresCluster({self.host}:{self.port}, running={self._running})"


def _quoted(value: str) -> str:
    """A `postgresql.conf` value, quoted (any setting may be)."""
    return "'" + value.replace("'", "''") + "'"
