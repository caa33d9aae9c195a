"""Which connector statuses show a Spark query owning the connector, and the 409 message."""

from __future__ import annotations

import pytest

from spark_eos_connect.herder.ownership import owned_config_message, query_owner
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState

HERDER = "rest-host:eosconnect-herder"
DRIVER = "spark-driver:4242"


@pytest.mark.parametrize(
    "state",
    [StatusState.RUNNING, StatusState.PAUSED, StatusState.STOPPED, StatusState.FAILED],
)
def test_a_status_a_driver_wrote_shows_its_query(state: StatusState) -> None:
    record = StatusRecord(state, DRIVER, 3)
    assert query_owner(record, HERDER) == record


@pytest.mark.parametrize(
    "record",
    [
        None,
        StatusRecord(StatusState.UNASSIGNED, DRIVER, 3),  # the query stopped
        StatusRecord(StatusState.STOPPED, HERDER, 3),  # this herder
        StatusRecord(StatusState.STOPPED, "other-host:eosconnect-herder", 3),  # another herder
    ],
)
def test_no_owner_without_a_drivers_live_status(record: StatusRecord | None) -> None:
    assert query_owner(record, HERDER) is None


def test_a_herder_with_its_own_worker_id_is_no_owner() -> None:
    assert query_owner(StatusRecord(StatusState.STOPPED, "test-worker", 1), "test-worker") is None


def test_the_message_names_the_driver_and_the_way_out() -> None:
    message = owned_config_message("orders", StatusRecord(StatusState.PAUSED, DRIVER, 7))
    assert message.startswith(
        f"Connector orders is run by the Spark query whose driver is {DRIVER}"
    )
    assert "(connector PAUSED, generation 7)" in message
    assert "Change the query's options and restart the query" in message
    assert "DELETE /connectors/orders" in message
