"""What a mode measured, what the count found, and the arithmetic on them (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Batch = tuple[int, float]
"""(records, seconds) of one measured batch or transaction of a mode (all tasks together)."""


@dataclass(frozen=True)
class Costs:
    """A mode's cost model: `seconds = fixed_s * batches + per_record_s * records`."""

    fixed_s: float | None
    """Per micro-batch (or transaction); None when the batches do not tell it."""
    per_record_s: float | None


def batch_costs(batches: Sequence[Batch]) -> Costs:
    """Least-squares line through the batches' (records, seconds).

    One batch size only: no fixed cost, per-record cost = time / records. A negative intercept
    (noise) is read as no fixed cost.
    """
    points = [(n, s) for n, s in batches if n > 0]
    if not points:
        return Costs(None, None)
    total_n = sum(n for n, _ in points)
    total_s = sum(s for _, s in points)
    average = total_s / total_n
    if len({n for n, _ in points}) < 2:
        return Costs(None, average)
    mean_n = total_n / len(points)
    mean_s = total_s / len(points)
    spread = sum((n - mean_n) ** 2 for n, _ in points)
    slope = sum((n - mean_n) * (s - mean_s) for n, s in points) / spread
    fixed = mean_s - slope * mean_n
    if slope <= 0:
        return Costs(None, average)
    if fixed < 0:
        return Costs(0.0, average)
    return Costs(fixed, slope)


@dataclass(frozen=True)
class ModeResult:
    """The measured part of one mode's run."""

    work: str
    mode: str
    records: int
    seconds: float
    batches: tuple[Batch, ...] = ()
    timing: str = ""
    """How `seconds` was measured (one line for the report)."""

    @property
    def records_per_s(self) -> float:
        """Records per second (0 when nothing was timed)."""
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def costs(self) -> Costs:
        """Fixed and per-record cost from the batches, else the average per record."""
        if self.batches:
            return batch_costs(self.batches)
        return Costs(None, self.seconds / self.records if self.records else None)


def ratio(value: ModeResult | None, base: ModeResult | None) -> float | None:
    """`value`'s records/s over `base`'s; None when either is missing or has no rate."""
    if value is None or base is None or base.records_per_s <= 0:
        return None
    return value.records_per_s / base.records_per_s


def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def progress_batches(
    progress: Iterable[Mapping[str, Any]], skip_below: int = 0
) -> list[tuple[int, Batch]]:
    """`(batchId, (numInputRows, triggerExecution seconds))` of a query's micro-batches that
    carried records, in order, from batch `skip_below` on (the last report of a batch wins)."""
    by_batch: dict[int, Mapping[str, Any]] = {}
    for entry in progress:
        by_batch[int(entry["batchId"])] = entry
    found = []
    for batch_id in sorted(by_batch):
        entry = by_batch[batch_id]
        rows = int(entry.get("numInputRows") or 0)
        if batch_id < skip_below or rows == 0:
            continue
        millis = (entry.get("durationMs") or {}).get("triggerExecution", 0)
        found.append((batch_id, (rows, millis / 1000)))
    return found


def parallel_batches(timings: Mapping[int, Sequence[tuple[float, float, int]]]) -> list[Batch]:
    """Batches of tasks that start each batch together: batch `i` spans from the earliest start
    to the latest end of the tasks' `(start, end, records)` number `i`."""
    counts = {len(t) for t in timings.values()}
    if len(counts) > 1:
        raise ValueError(f"tasks ran different numbers of batches: {sorted(counts)}")
    batches = []
    for i in range(counts.pop() if counts else 0):
        column = [task[i] for task in timings.values()]
        seconds = max(end for _, end, _ in column) - min(start for start, _, _ in column)
        batches.append((sum(rows for _, _, rows in column), seconds))
    return batches


@dataclass(frozen=True)
class Verification:
    """What counting found for one mode."""

    work: str
    mode: str
    expected: int
    found: int
    distinct: int
    where: str = "read_committed"
    error: str = ""

    @property
    def ok(self) -> bool:
        """Every expected record is there, once."""
        return not self.error and self.found == self.expected == self.distinct

    def describe(self) -> str:
        """One line for the report."""
        if self.error:
            return f"FAILED {self.work} / {self.mode}: {self.error}"
        status = "OK" if self.ok else "MISMATCH"
        return (
            f"{status} {self.work} / {self.mode}: {self.where} found {self.found:,} records "
            f"({self.distinct:,} distinct), expected {self.expected:,}"
        )

    def as_dict(self) -> dict[str, Any]:
        """For the JSON report."""
        return {
            "work": self.work,
            "mode": self.mode,
            "where": self.where,
            "expected": self.expected,
            "found": self.found,
            "distinct": self.distinct,
            "ok": self.ok,
            "error": self.error or None,
        }


def failed(work: str, mode: str, error: BaseException) -> Verification:
    """The verification line of a mode that did not finish."""
    return Verification(work, mode, 0, 0, 0, error=f"{type(error).__name__}: {error}"[:500])
