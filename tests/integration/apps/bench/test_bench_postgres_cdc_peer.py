"""`jobs/bench.py --only postgres-cdc`'s side by side with Debezium on a small run: all three
sides (PostgresCdcSource, Debezium under eosconnect, Debezium on a Connect worker) deliver every
snapshot row and every change once, and the eosconnect rows name the Connect worker's as their
peer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.bench.config import (
    CDC_DEBEZIUM_SNAPSHOT,
    CDC_DEBEZIUM_STREAMING,
    CDC_EOS_SNAPSHOT,
    CDC_EOS_STREAMING,
    CDC_JAVA_SNAPSHOT,
    CDC_JAVA_STREAMING,
)
from spark_eos_connect.apps.bench.postgres_cdc_peer import run_side_by_side
from spark_eos_connect.apps.bench.report import table_rows

pytestmark = pytest.mark.integration


def test_both_sides_deliver_each_row_and_change_once(
    spark: Any, kafka_config: dict[str, Any], tmp_path: Path
) -> None:
    results, verifications = run_side_by_side(
        spark, 1_000, 50, kafka_config, tmp_path, lambda _: None, rounds=1, warm_up=False
    )

    assert [r.mode for r in results] == [
        CDC_EOS_SNAPSHOT,
        CDC_JAVA_SNAPSHOT,
        CDC_DEBEZIUM_SNAPSHOT,
        CDC_EOS_STREAMING,
        CDC_JAVA_STREAMING,
        CDC_DEBEZIUM_STREAMING,
    ]
    assert all(r.records == 1_000 and r.seconds > 0 for r in results)
    assert len(verifications) == 6
    assert [v.describe() for v in verifications if not v.ok] == []
    peers = {row.result.mode: row.ratio_to_peer for row in table_rows(results)}
    for mode in (CDC_EOS_SNAPSHOT, CDC_EOS_STREAMING, CDC_JAVA_SNAPSHOT, CDC_JAVA_STREAMING):
        assert peers[mode] is not None, mode
