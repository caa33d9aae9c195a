"""The run's figures as a table, a JSON document and the rows both are made of (pure)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import LIMIT, PEERS, TIMED_WORKS, WORKS, BenchConfig
from spark_eos_connect.apps.bench.results import Costs, ModeResult, Verification, ratio

COLUMNS = [
    "work",
    "mode",
    "records",
    "seconds",
    "records/s",
    "x limit",
    "x peer",
    "fixed ms/batch",
    "us/record",
]
FOOTNOTES = [
    "x limit: records/s over the limit row of the same work; x peer: over the mode named in "
    "`peer` (file: the Connect EOS worker; at-least-once: exactly-once; Delta and noop: Spark's "
    "Kafka source; Kafka -> file: Kafka Connect's sink worker with as many tasks; first record: "
    "the Connect worker's time over the job's or the query's, so below 1 is slower).",
    "first record: seconds until one record is visible (Spark's floor: until its one row is in "
    "its writer's task); records/s and costs do not apply.",
    "fixed ms/batch and us/record: least-squares line through each measured micro-batch's "
    "(records, seconds), all tasks together, wall-clock; where the batches do not tell a fixed "
    "cost (n/a: one batch size, no micro-batches, noise), us/record is the average, fixed "
    "costs included.",
]


@dataclass(frozen=True)
class Row:
    """One line of the table: a mode's figures and its ratios."""

    result: ModeResult
    peer: str | None
    ratio_to_limit: float | None
    ratio_to_peer: float | None

    @property
    def timed(self) -> bool:
        """A row measured in seconds to an event, not in records/s."""
        return self.result.work in TIMED_WORKS

    def as_dict(self) -> dict[str, Any]:
        """For the JSON report (costs in ms and us, None when unknown)."""
        r = self.result
        costs = Costs(None, None) if self.timed else r.costs
        return {
            "work": r.work,
            "mode": r.mode,
            "records": r.records,
            "seconds": round(r.seconds, 3),
            "records_per_s": None if self.timed else round(r.records_per_s, 1),
            "ratio_to_limit": _rounded(self.ratio_to_limit, 3),
            "peer": self.peer,
            "ratio_to_peer": _rounded(self.ratio_to_peer, 3),
            "fixed_ms_per_batch": _rounded(_scaled(costs.fixed_s, 1e3), 1),
            "us_per_record": _rounded(_scaled(costs.per_record_s, 1e6), 3),
            "batches": [[n, round(s, 3)] for n, s in r.batches],
            "timing": r.timing,
        }


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def table_rows(results: Sequence[ModeResult]) -> list[Row]:
    """The results, grouped by work, with their ratios to the limit and to the peer of the same
    work."""
    order = list(WORKS.values())
    results = sorted(results, key=lambda r: order.index(r.work) if r.work in order else len(order))

    def find(work: str, mode: str) -> ModeResult | None:
        return next((r for r in results if r.work == work and r.mode == mode), None)

    rows = []
    for result in results:
        peer = PEERS.get((result.work, result.mode))
        rows.append(
            Row(
                result,
                peer,
                ratio(result, find(result.work, LIMIT)),
                ratio(result, find(result.work, peer)) if peer else None,
            )
        )
    return rows


def _cell(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def format_table(rows: Sequence[Row]) -> str:
    """The rows as an aligned Markdown table (text columns left, numbers right)."""
    cells = []
    for row in rows:
        r = row.result
        costs = Costs(None, None) if row.timed else r.costs
        cells.append(
            [
                r.work,
                r.mode,
                f"{r.records:,}",
                f"{r.seconds:.2f}",
                "n/a" if row.timed else f"{r.records_per_s:,.0f}",
                _cell(row.ratio_to_limit, ".2f"),
                _cell(row.ratio_to_peer, ".2f"),
                _cell(_scaled(costs.fixed_s, 1e3), ",.0f"),
                _cell(_scaled(costs.per_record_s, 1e6), ".2f"),
            ]
        )
    widths = [max(len(line[i]) for line in [COLUMNS, *cells]) for i in range(len(COLUMNS))]
    texts = 2

    def line(values: Sequence[str]) -> str:
        padded = [
            value.ljust(width) if i < texts else value.rjust(width)
            for i, (value, width) in enumerate(zip(values, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ":" + "-" * (w + 1) if i < texts else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(COLUMNS), rule + "|", *(line(c) for c in cells)])


@dataclass
class BenchReport:
    """Results and verifications of one run."""

    config: BenchConfig
    results: list[ModeResult] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    seconds: float = 0.0
    """The whole run's wall-clock time."""

    @property
    def ok(self) -> bool:
        """Every mode ran and its count matched."""
        return bool(self.verifications) and all(v.ok for v in self.verifications)

    def render(self) -> str:
        """The sizes, the table, how it was measured, and the verification lines."""
        c = self.config
        lines = [
            f"records={c.records:,} (generator, Kafka -> Delta), file lines={c.file_records:,}, "
            f"maxRecordsPerTrigger={c.per_trigger:,}, "
            f"value/line size={c.value_size} B, generator tasks={c.tasks} "
            f"(records.per.poll={c.records_per_poll:,}), FileStreamSource batch.size="
            f"{c.file_batch_size:,}, Kafka -> Delta: {c.delta_partitions} partitions, "
            f"{c.delta_rounds} rounds per reader; sinks and noop: {c.sink_records:,} records, "
            f"{c.sink_partitions} partitions, {c.sink_per_trigger:,} per trigger, "
            f"{c.reader_rounds} noop rounds per reader; first record: {c.first_record_runs} "
            "run(s) per mode",
            "",
            format_table(table_rows(self.results)),
            "",
            *FOOTNOTES,
            *(f"{r.work} / {r.mode}: {r.timing}" for r in self.results if r.timing),
            "",
            *(v.describe() for v in self.verifications),
            f"bench finished in {self.seconds:.0f}s",
        ]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The JSON document: sizes, one entry per table row, verifications."""
        return {
            "config": self.config.as_dict(),
            "seconds": round(self.seconds, 1),
            "ok": self.ok,
            "columns": COLUMNS,
            "rows": [row.as_dict() for row in table_rows(self.results)],
            "verifications": [v.as_dict() for v in self.verifications],
        }

    def write_json(self, path: Path) -> Path:
        """Write `as_dict()` to `path` (folders created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_dict(), indent=2) + "\n")
        return path
