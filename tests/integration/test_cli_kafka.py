"""`eosconnect kafka` announces itself, serves requests, survives a restart and stops cleanly."""

from __future__ import annotations

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

        assert [r.value for r in read_to_end(config, ["kept"])] == [b"before-restart"]
    finally:
        exit_code = broker.stop()
    assert exit_code == 0
