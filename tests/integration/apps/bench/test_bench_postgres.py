"""`jobs/bench.py --only postgres`'s work on a small run: every mode writes every row once and
the sink modes are compared with the at-least-once upsert."""

from __future__ import annotations

import pytest

from spark_eos_connect.apps.bench.config import (
    LIMIT,
    PEERS,
    PG_ALOS_UPSERT,
    PG_SINK_INSERT,
    PG_SINK_UPSERT,
    POSTGRES,
    BenchConfig,
)
from spark_eos_connect.apps.bench.postgres import run_postgres

pytestmark = pytest.mark.integration


def test_every_postgres_mode_writes_each_row_once() -> None:
    results, verifications = run_postgres(BenchConfig(records=3_000), POSTGRES, lambda _: None)

    assert [r.mode for r in results] == [LIMIT, PG_ALOS_UPSERT, PG_SINK_INSERT, PG_SINK_UPSERT]
    assert all(r.records == 3_000 and r.seconds > 0 for r in results)
    assert [v.describe() for v in verifications if not v.ok] == []
    assert PEERS[(POSTGRES, PG_SINK_UPSERT)] == PG_ALOS_UPSERT
