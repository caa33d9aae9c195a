"""The throwaway PostgreSQL cluster the tests share: logical WAL, password logins, fresh
databases per test, and a clean removal on close."""

from __future__ import annotations

import os
import subprocess

import pytest

from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase

pytestmark = pytest.mark.integration


def test_the_session_cluster_decodes_logically_and_accepts_password_logins(
    postgres: PostgresCluster, postgres_db: PostgresDatabase
) -> None:
    with postgres_db.connect() as connection:
        settings = dict(
            connection.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('wal_level', 'max_replication_slots', 'max_wal_senders', 'port')"
            ).fetchall()
        )
        user, database = connection.execute("SELECT current_user, current_database()").fetchone()
    assert settings["wal_level"] == "logical"
    assert int(settings["max_replication_slots"]) >= 10
    assert int(settings["max_wal_senders"]) >= 10
    assert int(settings["port"]) == postgres.port
    assert (user, database) == (postgres.user, postgres_db.dbname)


def test_each_test_gets_a_fresh_database(postgres: PostgresCluster) -> None:
    first, second = postgres.create_database(), postgres.create_database()
    assert first.dbname != second.dbname
    first.execute("CREATE TABLE only_here (id int PRIMARY KEY)")
    with second.connect() as connection:
        found = connection.execute("SELECT to_regclass('only_here')").fetchone()
    assert found == (None,)


def test_drop_database_frees_the_slots_of_a_database_even_one_being_read(
    postgres: PostgresCluster,
) -> None:
    import psycopg

    database = postgres.create_database()
    database.execute(
        "SELECT pg_create_logical_replication_slot('left_behind', 'pgoutput')",
        "SELECT pg_create_logical_replication_slot('being_read', 'pgoutput')",
    )
    reader = psycopg.connect(database.dsn + " replication=database", autocommit=True)
    reader.execute(
        "START_REPLICATION SLOT being_read LOGICAL 0/0 (proto_version '1', "
        "publication_names 'none')"
    )  # holds the slot until ended
    slots_of = "SELECT count(*) FROM pg_replication_slots WHERE database = %s"
    with postgres.database().connect() as admin:
        assert admin.execute(slots_of, (database.dbname,)).fetchone() == (2,)
        active = admin.execute(slots_of + " AND active", (database.dbname,)).fetchone()
        assert active == (1,)
        postgres.drop_database(database.dbname)
        assert admin.execute(slots_of, (database.dbname,)).fetchone() == (0,)
        gone = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database.dbname,))
        assert gone.fetchone() is None
    assert database.dbname not in postgres.created
    reader.close()


def test_a_wrong_password_is_refused(postgres_db: PostgresDatabase) -> None:
    import psycopg

    wrong = PostgresDatabase(
        postgres_db.host, postgres_db.port, postgres_db.user, "not-it", postgres_db.dbname
    )
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        wrong.connect()


def test_close_stops_the_server_and_removes_its_folder() -> None:
    cluster = PostgresCluster().start()
    base = cluster.base_dir
    assert base is not None and (base / "data" / "postmaster.pid").exists()
    if os.geteuid() == 0:
        assert (base / "data").stat().st_uid != 0  # the server does not run as root
    with cluster.database().connect() as connection:
        assert connection.execute("SELECT 1").fetchone() == (1,)
    cluster.close()
    assert not base.exists()
    probe = subprocess.run(
        ["pg_isready", "-h", cluster.host, "-p", str(cluster.port)], capture_output=True
    )
    assert probe.returncode != 0
