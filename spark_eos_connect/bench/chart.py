"""The table as a PNG bar chart (matplotlib, the `bench` extra): records/s per mode, grouped by
work, each bar labelled with its ratio to the limit or to the peer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spark_eos_connect.bench.report import Row

COLOURS = {"file -> Kafka": "#4c72b0", "generator -> Kafka": "#55a868", "Kafka -> Delta": "#c44e52"}


def bar_label(row: Row) -> str:
    """`1.23x limit` / `0.45x Spark Kafka source` / `` for a row."""
    parts = []
    if row.ratio_to_limit is not None and row.result.mode != "limit":
        parts.append(f"{row.ratio_to_limit:.2f}x limit")
    if row.ratio_to_peer is not None:
        parts.append(f"{row.ratio_to_peer:.2f}x {row.peer}")
    return ", ".join(parts)


def write_png(rows: Sequence[Row], path: Path, title: str) -> Path | None:
    """Draw the chart into `path`; None (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    labels = [f"{r.result.work}\n{r.result.mode}" for r in rows]
    values = [r.result.records_per_s / 1000 for r in rows]
    figure, axes = plt.subplots(figsize=(10, 0.7 * len(rows) + 1.5))
    try:
        positions = list(range(len(rows)))[::-1]
        colours = [COLOURS.get(r.result.work, "#8172b2") for r in rows]
        axes.barh(positions, values, color=colours)
        axes.set_yticks(positions, labels, fontsize=8)
        axes.set_xlabel("thousand records/s")
        axes.set_title(title, fontsize=10)
        top = max(values, default=0.0) or 1.0
        axes.set_xlim(0, top * 1.45)
        for position, value, row in zip(positions, values, rows, strict=True):
            text = f"{row.result.records_per_s:,.0f}/s"
            label = bar_label(row)
            axes.text(
                value + top * 0.01,
                position,
                f"{text}  {label}" if label else text,
                va="center",
                fontsize=8,
            )
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=110)
    finally:
        plt.close(figure)
    return path
