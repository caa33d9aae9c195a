"""Plans for unit tests of the source task loop."""

from __future__ import annotations

import dataclasses
from typing import Any

from spark_eos_connect.source.plan import SourceTaskPlan


def example_plan(
    committed: list[tuple[dict[str, Any], dict[str, Any] | None]], **changes: Any
) -> SourceTaskPlan:
    """A plausible `SourceTaskPlan` for unit tests, with `changes` applied."""
    plan = SourceTaskPlan(
        connector="c",
        task=0,
        task_class="x.Y",
        task_config={"topic": "t"},
        transactional_id="eosconnect-c-0",
        exactly_once=True,
        transaction_boundary="poll",
        transaction_interval_ms=60000,
        offsets_topic="eosconnect-offsets",
        offsets_topic_partitions=25,
        mirror_offsets_topic=None,
        mirror_offsets_topic_partitions=25,
        committed=list(committed),  # type: ignore[arg-type]
        offsets_positions={3: 17},
        max_records=10,
        max_poll_duration_ms=1000,
        config_topic="eosconnect-configs",
        status_topic="eosconnect-status",
        generation_commit_offset=4,
    )
    return dataclasses.replace(plan, **changes)
