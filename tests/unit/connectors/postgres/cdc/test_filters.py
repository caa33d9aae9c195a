"""Debezium's table, schema and column filters and `message.key.columns`, as regular
expressions matching whole names."""

from __future__ import annotations

import pytest

from spark_eos_connect.connectors.postgres.cdc.filters import CaptureFilter, parse_key_columns
from spark_eos_connect.errors import ConfigError


def test_an_empty_filter_captures_every_table_and_column() -> None:
    capture = CaptureFilter.from_lists()
    assert capture.captures_table("public", "orders")
    assert capture.captures_column("public", "orders", "card")
    assert not capture.narrowed


def test_include_lists_match_whole_names() -> None:
    capture = CaptureFilter.from_lists(table_include=[r"public\.ord.*"])
    assert capture.captures_table("public", "orders")
    assert not capture.captures_table("public", "reorders")
    assert not capture.captures_table("audit", "orders")


def test_exclude_lists_leave_out_tables_schemas_and_columns() -> None:
    capture = CaptureFilter.from_lists(
        schema_exclude=["audit"],
        table_exclude=[r"public\.secrets"],
        column_exclude=[r"public\.orders\.card", r".*\.password"],
    )
    assert not capture.captures_table("audit", "orders")
    assert not capture.captures_table("public", "secrets")
    assert capture.captures_table("public", "orders")
    assert not capture.captures_column("public", "orders", "card")
    assert not capture.captures_column("shop", "users", "password")
    assert capture.captures_column("public", "orders", "item")


def test_a_schema_include_list_narrows_before_the_table_lists() -> None:
    capture = CaptureFilter.from_lists(schema_include=["shop"], table_exclude=[r"shop\.tmp"])
    assert capture.captures_table("shop", "orders")
    assert not capture.captures_table("shop", "tmp")
    assert not capture.captures_table("public", "orders")


@pytest.mark.parametrize("kind", ["schema", "table", "column"])
def test_an_include_list_and_an_exclude_list_of_a_kind_are_exclusive(kind: str) -> None:
    with pytest.raises(ConfigError, match=rf"{kind}.include.list and {kind}.exclude.list"):
        CaptureFilter.from_lists(**{f"{kind}_include": ["a"], f"{kind}_exclude": ["b"]})


def test_a_bad_regular_expression_is_named_with_its_option() -> None:
    with pytest.raises(ConfigError, match=r"table.exclude.list: '\(' is not a regular"):
        CaptureFilter.from_lists(table_exclude=["("])


def test_message_key_columns_give_keys_to_matching_tables() -> None:
    capture = CaptureFilter.from_lists(key_columns=r"public\.logs:host,at; .*\.events:id")
    assert capture.key_override("public", "logs") == ("host", "at")
    assert capture.key_override("shop", "events") == ("id",)
    assert capture.key_override("public", "orders") is None


@pytest.mark.parametrize("text", ["public.logs", "public.logs:", ":id"])
def test_a_malformed_message_key_columns_entry_is_named(text: str) -> None:
    with pytest.raises(ConfigError, match=r"message\.key\.columns"):
        parse_key_columns(text)
