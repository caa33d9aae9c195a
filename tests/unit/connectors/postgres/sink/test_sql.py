"""The SQL PostgresSink runs: quoted identifiers, table names, upsert/update/delete text."""

from __future__ import annotations

import pytest

from spark_eos_connect.connectors.postgres.sink.sql import (
    TableName,
    add_column_sql,
    copy_sql,
    create_stage_sql,
    create_table_sql,
    delete_sql,
    quote,
    update_from_sql,
    upsert_from_sql,
)
from spark_eos_connect.errors import ConfigError

T = TableName("Orders")


def test_identifiers_are_quoted_with_inner_quotes_doubled() -> None:
    assert quote('we"ird Name') == '"we""ird Name"'
    with pytest.raises(ConfigError):
        quote("")


def test_table_names_are_table_or_schema_dot_table() -> None:
    assert TableName.parse("orders") == TableName("orders")
    assert TableName.parse("sales.orders") == TableName("orders", "sales")
    assert TableName.parse("sales.orders").sql == '"sales"."orders"'
    with pytest.raises(ConfigError, match=r"table\.name\.format"):
        TableName.parse("db.sales.orders")


def test_create_table_has_not_null_and_the_primary_key() -> None:
    sql = create_table_sql(T, [("id", "BIGINT", False), ("note", "TEXT", True)], ["id"])
    assert sql == 'CREATE TABLE "Orders" ("id" BIGINT NOT NULL, "note" TEXT, PRIMARY KEY ("id"))'
    assert "PRIMARY KEY" not in create_table_sql(T, [("a", "TEXT", True)], [])


def test_add_column_and_copy() -> None:
    assert add_column_sql(T, "qty", "INTEGER") == 'ALTER TABLE "Orders" ADD COLUMN "qty" INTEGER'
    assert copy_sql(T.sql, ["id", "n"]) == 'COPY "Orders" ("id", "n") FROM STDIN'


def test_stage_takes_the_tables_column_types_and_empties_at_commit() -> None:
    assert create_stage_sql("s1", T, ["id"]) == (
        'CREATE TEMP TABLE "s1" ON COMMIT DELETE ROWS AS SELECT "id" FROM "Orders" WITH NO DATA'
    )


def test_upsert_updates_the_non_key_columns_or_does_nothing() -> None:
    assert upsert_from_sql(T, "s", ["id", "n"], ["id"]) == (
        'INSERT INTO "Orders" ("id", "n") SELECT "id", "n" FROM "s" '
        'ON CONFLICT ("id") DO UPDATE SET "n" = EXCLUDED."n"'
    )
    assert upsert_from_sql(T, "s", ["id"], ["id"]).endswith('ON CONFLICT ("id") DO NOTHING')


def test_update_and_delete_match_every_key_column() -> None:
    assert update_from_sql(T, "s", ["a", "b", "n"], ["a", "b"]) == (
        'UPDATE "Orders" AS t SET "n" = s."n" FROM "s" AS s WHERE t."a" = s."a" AND t."b" = s."b"'
    )
    assert update_from_sql(T, "s", ["a"], ["a"]) is None
    assert delete_sql(T, ["a", "b"]) == 'DELETE FROM "Orders" WHERE "a" = %s AND "b" = %s'
