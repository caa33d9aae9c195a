"""The table as a PNG bar chart (matplotlib, the `bench` extra): records/s per mode, grouped by
work, each bar labelled with its ratio to the limit or to the peer; the time-to-first-record
rows in a panel of their own, in seconds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.report import Row

COLOURS = {
    "file -> Kafka": "#4c72b0",
    "generator -> Kafka": "#55a868",
    "Kafka -> Delta": "#c44e52",
    "Kafka -> file": "#dd8452",
    "Kafka -> noop": "#937860",
    "first record": "#8172b2",
}


def bar_label(row: Row) -> str:
    """`1.23x limit` / `0.45x Spark Kafka source` / `` for a row."""
    parts = []
    if row.ratio_to_limit is not None and row.result.mode != "limit":
        parts.append(f"{row.ratio_to_limit:.2f}x limit")
    if row.ratio_to_peer is not None:
        parts.append(f"{row.ratio_to_peer:.2f}x {row.peer}")
    return ", ".join(parts)


def bar_value(row: Row) -> tuple[float, str]:
    """What a row's bar shows: (length, text) — thousand records/s, or seconds when timed."""
    if row.timed:
        return row.result.seconds, f"{row.result.seconds:.1f} s"
    return row.result.records_per_s / 1000, f"{row.result.records_per_s:,.0f}/s"


def _panel(axes: Any, rows: Sequence[Row], unit: str) -> None:
    labels = [f"{r.result.work}\n{r.result.mode}" for r in rows]
    bars = [bar_value(r) for r in rows]
    positions = list(range(len(rows)))[::-1]
    axes.barh(positions, [v for v, _ in bars], color=[COLOURS.get(r.result.work) for r in rows])
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set_xlabel(unit)
    top = max((v for v, _ in bars), default=0.0) or 1.0
    axes.set_xlim(0, top * 1.45)
    for position, (value, text), row in zip(positions, bars, rows, strict=True):
        label = bar_label(row)
        axes.text(
            value + top * 0.01,
            position,
            f"{text}  {label}" if label else text,
            va="center",
            fontsize=8,
        )


def write_png(rows: Sequence[Row], path: Path, title: str) -> Path | None:
    """Draw the chart into `path`; None (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = [
        (part, unit)
        for part, unit in (
            ([r for r in rows if not r.timed], "thousand records/s"),
            ([r for r in rows if r.timed], "seconds to the first record (floor: row)"),
        )
        if part
    ] or [([], "thousand records/s")]
    heights = [max(len(part), 1) for part, _ in panels]
    figure, grid = plt.subplots(
        len(panels),
        1,
        figsize=(10, 0.7 * sum(heights) + 1.5 * len(panels)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    try:
        for axes, (part, unit) in zip(grid[:, 0], panels, strict=True):
            _panel(axes, part, unit)
        grid[0, 0].set_title(title, fontsize=10)
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=110)
    finally:
        plt.close(figure)
    return path
