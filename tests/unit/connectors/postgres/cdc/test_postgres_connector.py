"""PostgresCdcSource on the driver: its short name, options, task split and offset checks."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries, ExactlyOnceSupport
from spark_eos_connect.connectors.postgres.cdc import PostgresCdcSourceConnector
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.plugins.connectors import resolve_connector_class

PROPS = {
    "database.hostname": "localhost",
    "database.user": "cdc",
    "database.password": "secret",
    "database.dbname": "shop",
    "topic.prefix": "shop",
}


def test_the_short_name_resolves() -> None:
    assert resolve_connector_class("PostgresCdcSource") is PostgresCdcSourceConnector


def test_one_task_exactly_once_and_connector_defined_transactions() -> None:
    connector = PostgresCdcSourceConnector()
    connector.start(PROPS)
    assert connector.task_configs(4) == [PROPS]
    assert connector.exactly_once_support(PROPS) is ExactlyOnceSupport.SUPPORTED
    assert (
        connector.can_define_transaction_boundaries(PROPS)
        is ConnectorTransactionBoundaries.SUPPORTED
    )


def test_missing_options_and_unknown_snapshot_modes_are_named() -> None:
    with pytest.raises(ConfigError, match=r"topic\.prefix"):
        PostgresCdcSourceConnector().start({k: v for k, v in PROPS.items() if k != "topic.prefix"})
    with pytest.raises(ConfigError, match=r"snapshot\.mode"):
        PostgresCdcSourceConnector().start({**PROPS, "snapshot.mode": "schema_only"})


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("snapshot.delay.ms", "5000"),
        ("incremental.snapshot.chunk.size", "5000"),
        ("signal.data.collection", "public.signals"),
        ("event.converting.failure.handling.mode", "warn"),
    ],
)
def test_a_debezium_option_not_implemented_is_refused_by_name(option: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"{option}='{value}' is not supported"):
        PostgresCdcSourceConnector().start({**PROPS, option: value})


def test_a_debezium_option_at_its_default_is_accepted() -> None:
    PostgresCdcSourceConnector().start({**PROPS, "snapshot.delay.ms": "0"})
    PostgresCdcSourceConnector().start({**PROPS, "event.converting.failure.handling.mode": "fail"})


def test_clashing_filters_fail_the_connector_start() -> None:
    with pytest.raises(ConfigError, match=r"table.include.list and table.exclude.list"):
        PostgresCdcSourceConnector().start(
            {**PROPS, "table.include.list": "a", "table.exclude.list": "b"}
        )


def test_offsets_are_checked_before_they_are_altered() -> None:
    connector = PostgresCdcSourceConnector()
    good = {"lsn": 100, "txId": 5, "record": 1, "complete": True}
    assert connector.alter_offsets(PROPS, [({"server": "shop"}, good), ({"server": "shop"}, None)])
    with pytest.raises(ConfigError, match="partitions look like"):
        connector.alter_offsets(PROPS, [({"server": "other"}, good)])
    with pytest.raises(ConfigError, match="not an offset of PostgresCdcSource"):
        connector.alter_offsets(PROPS, [({"server": "shop"}, {"position": 1})])


@pytest.mark.parametrize("value", ["none", "c,u"])
def test_asking_for_truncate_events_is_refused_by_name(value: str) -> None:
    with pytest.raises(ConfigError, match=r"skipped\.operations=.*asks for truncate events"):
        PostgresCdcSourceConnector().start({**PROPS, "skipped.operations": value})
