"""KIP-618's preflight questions through a real query: a connector that raises when asked is
refused with an error that names the option being checked, then the connector's exception, and
nothing reaches the topic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

FAULTY = "spark_eos_connect.testing.FaultyGeneratorConnector"


@pytest.mark.parametrize(
    ("switch", "option"),
    [
        ("fail-exactly-once-support", "exactly.once.support=required"),
        ("fail-transaction-boundaries", "transaction.boundary=connector"),
    ],
)
def test_a_raising_preflight_question_names_the_option_then_the_exception(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
    switch: str,
    option: str,
) -> None:
    (tmp_path / switch).touch()
    topic, name = topic_factory("preflight"), unique_name("preflight")
    key, value = option.split("=")
    kafka = {"kafka.bootstrap.servers": bootstrap_servers}

    with pytest.raises(Exception) as refused:  # Spark wraps the driver's error
        records = (
            spark.readStream.format("eosconnect")
            .options(name=name, topic=topic, **{"connector.class": FAULTY, key: value}, **kafka)
            .option("faults.dir", str(tmp_path))
            .load()
        )
        query = (
            records.writeStream.format("eosconnect")
            .option("name", name)
            .options(**kafka)
            .option("checkpointLocation", str(tmp_path / "ck"))
            .start()
        )
        try:
            query.awaitTermination(180)
        finally:
            query.stop()

    message = str(refused.value)
    assert f"{option}, but connector {name} ({FAULTY}) failed when asked" in message, message
    assert f"KeyError: '{switch}: no credentials to ask the source'" in message, message
    assert read_committed(topic) == []
