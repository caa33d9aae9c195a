"""Pure pieces of the local broker: cluster ids the storage tool accepts."""

from __future__ import annotations

import base64
import uuid

import pytest

from spark_eos_connect.jvm import broker


def test_cluster_ids_are_kafka_uuids_that_never_start_with_a_dash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dash_first = uuid.UUID(bytes=b"\xf8" + bytes(15))  # base64url of 0xf8... starts with "-"
    assert base64.urlsafe_b64encode(dash_first.bytes).startswith(b"-")
    drawn = iter([dash_first, uuid.UUID(int=1)])
    monkeypatch.setattr(broker.uuid, "uuid4", lambda: next(drawn))

    cluster_id = broker.new_cluster_id()

    assert cluster_id == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert len(cluster_id) == 22 and "=" not in cluster_id
