"""KIP-875 end to end: a running source query is stopped through the REST API, its offsets are
altered (then reset) through the REST API, and on resume the query continues exactly from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def rest(default_rest_api: TestClient) -> TestClient:
    return default_rest_api


def positions(read_committed: Callable[..., list[Any]], topic: str) -> list[int]:
    return [parse_generated_value(r.value)[1] for r in read_committed(topic)]


def test_alter_then_reset_offsets_of_a_stopped_running_query(
    generator_query: Callable[..., Any],
    rest: TestClient,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    topic = topic_factory("altered")
    name = unique_name("altered")
    query = generator_query(name, topic)
    try:
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > 0, 120, "records before the stop"
        )
        assert rest.patch(f"/connectors/{name}/offsets", json={"offsets": []}).status_code == 400

        assert rest.put(f"/connectors/{name}/stop").status_code == 204
        wait_for(lambda: not query.status["isTriggerActive"], 60, "the query to go idle")
        before = positions(read_committed, topic)
        [entry] = rest.get(f"/connectors/{name}/offsets").json()["offsets"]
        assert entry["offset"] == {"position": len(before)}

        altered = {"offsets": [{"partition": entry["partition"], "offset": {"position": 5000}}]}
        response = rest.patch(f"/connectors/{name}/offsets", json=altered)
        assert response.status_code == 200, response.text
        assert "message" in response.json()
        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > len(before) + 50,
            120,
            "records after resume",
        )

        assert rest.put(f"/connectors/{name}/stop").status_code == 204
        wait_for(lambda: not query.status["isTriggerActive"], 60, "the query to go idle")
        after_alter = positions(read_committed, topic)
        assert rest.delete(f"/connectors/{name}/offsets").status_code == 200
        assert rest.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > len(after_alter) + 50,
            120,
            "records after reset",
        )
    finally:
        query.stop()

    written = positions(read_committed, topic)
    resumed = written[len(before) : len(after_alter)]
    restarted = written[len(after_alter) :]
    assert before == list(range(len(before)))
    assert resumed == list(range(5000, 5000 + len(resumed)))  # exactly from the altered offset
    assert restarted[: len(restarted)] == list(range(len(restarted)))  # from scratch after reset
