"""A running source query owns its connector's config: PUT /connectors/{name}/config answers 409
naming the query's driver, also once the query reported the connector STOPPED after a REST stop;
once the query is gone and the connector stopped, the config can be changed (real broker, Spark,
REST API)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration


def connector_state(rest: TestClient, name: str) -> dict[str, Any]:
    """The connector's ``{"state","worker_id"}`` (UNASSIGNED before any status)."""
    response = rest.get(f"/connectors/{name}/status")
    if response.status_code == 404:
        return {"state": "UNASSIGNED", "worker_id": None}
    return dict(response.json()["connector"])


def wait_for_state(rest: TestClient, name: str, wanted: dict[str, Any], what: str) -> None:
    wait_for(lambda: connector_state(rest, name) == wanted, 120, what)


def put_changed(rest: TestClient, name: str, config: dict[str, Any]) -> Any:
    return rest.put(f"/connectors/{name}/config", json={**config, "rate": "10"})


def test_config_changes_are_refused_while_the_query_owns_the_connector(
    generator_query: Callable[..., Any],
    default_rest_api: TestClient,
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    rest, name = default_rest_api, unique_name("owned")
    query = generator_query(name, topic_factory("owned"))
    wait_for(lambda: connector_state(rest, name)["state"] == "RUNNING", 120, "RUNNING")
    driver = connector_state(rest, name)["worker_id"]
    assert not driver.endswith(":eosconnect-herder")
    config = rest.get(f"/connectors/{name}/config").json()
    assert config["rate"] == "200"

    refused = put_changed(rest, name, config)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error_code"] == 409
    assert refused.json()["message"].startswith(
        f"Connector {name} is run by the Spark query whose driver is {driver} (connector RUNNING"
    )
    assert rest.get(f"/connectors/{name}/config").json() == config

    # A REST stop writes its STOPPED status first; the query's own STOPPED comes last.
    assert rest.put(f"/connectors/{name}/stop").status_code == 204
    wait_for_state(rest, name, {"state": "STOPPED", "worker_id": driver}, "the query's STOPPED")
    refused = put_changed(rest, name, config)
    assert refused.status_code == 409, refused.text
    assert f"driver is {driver} (connector STOPPED" in refused.json()["message"]

    # Resumed, then the query stops. Its UNASSIGNED is best effort (Spark may end the reader's
    # Python worker first), so the way out is a stop nobody answers: then the change is taken.
    assert rest.put(f"/connectors/{name}/resume").status_code == 202
    wait_for_state(rest, name, {"state": "RUNNING", "worker_id": driver}, "RUNNING again")
    query.stop()
    assert rest.put(f"/connectors/{name}/stop").status_code == 204
    accepted = put_changed(rest, name, config)
    assert accepted.status_code == 200, accepted.text
    assert rest.get(f"/connectors/{name}/config").json()["rate"] == "10"
