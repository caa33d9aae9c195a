"""PostgresSink's options: Confluent's names, URL forms, and the modes that must go together."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.connectors.postgres.sink.config import (
    DEFAULT_OFFSETS_TABLE,
    InsertMode,
    PkMode,
    libpq_url,
    parse_sink_config,
    redacted_url,
    table_name_for,
)
from spark_eos_connect.errors import ConfigError

BASE = {"name": "pg", "connection.url": "jdbc:postgresql://db:5432/shop"}


def test_defaults_follow_confluents_jdbc_sink() -> None:
    config = parse_sink_config(BASE)
    assert config.insert_mode is InsertMode.INSERT
    assert config.pk_mode is PkMode.NONE
    assert config.table_format == "${topic}"
    assert config.batch_size == 3000
    assert (config.auto_create, config.auto_evolve, config.delete_enabled) == (False,) * 3
    assert config.offsets_table == DEFAULT_OFFSETS_TABLE


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("jdbc:postgresql://db:5432/shop", "postgresql://db:5432/shop"),
        ("jdbc:postgresql://db/shop?sslmode=require", "postgresql://db/shop?sslmode=require"),
        ("jdbc:postgresql:shop", "postgresql:///shop"),
        ("postgresql://u@db/shop", "postgresql://u@db/shop"),
        ("postgres://db/shop", "postgres://db/shop"),
    ],
)
def test_jdbc_and_libpq_urls_become_libpq_urls(url: str, expected: str) -> None:
    assert libpq_url(url) == expected


def test_an_unknown_url_scheme_is_refused_without_showing_the_password() -> None:
    with pytest.raises(ConfigError, match=r"connection\.url") as caught:
        parse_sink_config({**BASE, "connection.url": "jdbc:mysql://u:s3cret@db/shop"})
    assert "s3cret" not in str(caught.value)


def test_redacted_url_hides_passwords_in_user_info_and_parameters() -> None:
    assert redacted_url("postgresql://me:pw@db/x") == "postgresql://me:***@db/x"
    assert redacted_url("jdbc:postgresql://db/x?user=a&password=pw&ssl=1") == (
        "jdbc:postgresql://db/x?user=a&password=***&ssl=1"
    )


def test_the_password_is_a_password_and_reaches_the_client() -> None:
    config = parse_sink_config({**BASE, "connection.user": "me", "connection.password": "pw"})
    assert "pw" not in repr(config)
    assert config.connect_kwargs() == {
        "conninfo": "postgresql://db:5432/shop",
        "user": "me",
        "password": "pw",
    }


@pytest.mark.parametrize(
    ("extra", "option", "message"),
    [
        ({"insert.mode": "upsert"}, "insert.mode", "needs a primary key"),
        ({"insert.mode": "update"}, "insert.mode", "needs a primary key"),
        (
            {"delete.enabled": "true", "pk.mode": "record_value"},
            "delete.enabled",
            "pk.mode=record_key",
        ),
        ({"pk.mode": "kafka", "pk.fields": "a,b"}, "pk.fields", "3 columns"),
        ({"pk.fields": "id"}, "pk.fields", "pk.mode=none"),
        ({"table.name.format": "${schema}_x"}, "table.name.format", "only ${topic}"),
        ({"insert.mode": "merge"}, "insert.mode", "insert, upsert, update"),
        ({"pk.mode": "key"}, "pk.mode", "record_key"),
        ({"batch.size": "0"}, "batch.size", "at least 1"),
        ({"fields.whitelist": "a", "fields.include": "b"}, "fields.include", "only one"),
    ],
)
def test_bad_options_name_the_option(extra: dict[str, str], option: str, message: str) -> None:
    with pytest.raises(InvalidConfigError) as caught:
        parse_sink_config({**BASE, **extra})
    assert option in caught.value.problems
    assert message in str(caught.value)


def test_modes_are_case_insensitive_and_fields_include_is_fields_whitelist() -> None:
    config = parse_sink_config(
        {**BASE, "insert.mode": "UPSERT", "pk.mode": "Record_Key", "fields.include": "a, b"}
    )
    assert (config.insert_mode, config.pk_mode) == (InsertMode.UPSERT, PkMode.RECORD_KEY)
    assert config.fields == ("a", "b")
    assert parse_sink_config({**BASE, "fields.whitelist": "c"}).fields == ("c",)


def test_field_exclude_list_names_fields_of_every_topic_or_of_one() -> None:
    config = parse_sink_config({**BASE, "field.exclude.list": "secret, orders:note"})
    assert config.excluded == ("secret", "orders:note")
    assert config.excludes("orders", "secret") and config.excludes("payments", "secret")
    assert config.excludes("orders", "note") and not config.excludes("payments", "note")
    assert not parse_sink_config(BASE).excludes("orders", "secret")


def test_the_connector_name_is_required() -> None:
    with pytest.raises(InvalidConfigError, match="name"):
        parse_sink_config({"connection.url": BASE["connection.url"]})


def test_table_name_format_replaces_the_topic() -> None:
    assert table_name_for("kafka_${topic}", "orders") == "kafka_orders"
