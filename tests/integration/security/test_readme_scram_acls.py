"""The README's block creating a SCRAM user and its ACLs, run as written (names made unique)
against the SASL_SSL broker: the user it creates runs the exactly-once source query."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing import wait_for

from ..docs.readme import replace_literals, snippet
from .conftest import SECURITY_MARKS
from .paths import committed

pytestmark = SECURITY_MARKS

RECORDS = 20


def test_the_readme_block_creates_a_user_whose_source_query_runs(
    spark: Any, secured_broker: LocalKafkaBroker, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    user, group, password = f"orders-{tag}", f"group-{tag}", f"secret-{tag}"
    admin = secured_broker.client_config()
    internal = {kind: f"{group}-{kind}" for kind in ("configs", "offsets", "status")}
    code = replace_literals(
        snippet("```python from confluent_kafka.admin import (").text,
        {
            "127.0.0.1:9092": admin["bootstrap.servers"],
            "ADMIN-PASSWORD": admin["sasl.password"],
            "/path/to/ca.pem": admin["ssl.ca.location"],
            "orders": user,
            "ORDERS-PASSWORD": password,
            "User:orders": f"User:{user}",
            "eosconnect-orders-": f"{group}-{user}-",
            "connect-cluster-eosconnect": f"connect-cluster-{group}",
            **{f"eosconnect-{kind}": name for kind, name in internal.items()},
        },
    )
    topics = admin_client(admin)  # the topics exist first: the user may not create them
    ensure_topic(topics, user, partitions=1)
    for kind, name in internal.items():
        partitions = 1 if kind == "configs" else 3
        ensure_topic(topics, name, partitions, {"cleanup.policy": "compact"})

    exec(compile(code, "README.md[scram and acls]", "exec"), {})

    kafka = {
        f"kafka.{key}": value
        for key, value in {**admin, "sasl.username": user, "sasl.password": password}.items()
    }
    options = {
        "name": user,
        "connector.class": "Generator",
        "topic": user,
        "max.records": str(RECORDS),
        "group.id": group,
        "config.storage.topic": internal["configs"],
        "offset.storage.topic": internal["offsets"],
        "status.storage.topic": internal["status"],
        **kafka,
    }
    query = (
        spark.readStream.format("eosconnect")
        .options(**options)
        .load()
        .writeStream.format("eosconnect")
        .options(**{k: v for k, v in options.items() if k in ("name", "group.id") or k in kafka})
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for(
            lambda: len(committed(secured_broker, user)) == RECORDS or not query.isActive,
            120,
            "the user's records",
        )
        assert query.isActive, query.exception()
    finally:
        query.stop()

    assert len(committed(secured_broker, user)) == RECORDS
