"""`eosconnect kafka` announces itself, serves requests, survives a restart and stops cleanly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.testing import BrokerProcess

pytestmark = pytest.mark.integration


def test_broker_keeps_committed_data_across_a_clean_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        config = {"bootstrap.servers": broker.bootstrap_servers}
        ensure_topic(admin_client(config), "kept")
        producer = Producer({**config, "transactional.id": "restart-check"})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("kept", value=b"before-restart")
        producer.commit_transaction(30)

        broker.restart()

        # a broker just started may list the partition's end before it has loaded its log
        # (seen once in CI with clients connecting in 20 ms): read until it says more, bounded
        deadline = time.monotonic() + 30
        values = [r.value for r in read_to_end(config, ["kept"])]
        while not values and time.monotonic() < deadline:
            time.sleep(0.2)
            values = [r.value for r in read_to_end(config, ["kept"])]
        assert values == [b"before-restart"]
    finally:
        exit_code = broker.stop()
    assert exit_code == 0
