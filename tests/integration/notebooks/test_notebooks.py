"""Every notebook runs top to bottom on the local stack (its Python cells, in order)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect import __version__

pytestmark = pytest.mark.integration

NOTEBOOKS = sorted((Path(__file__).resolve().parents[3] / "notebooks").glob("*.py"))
SEPARATOR = "# COMMAND ----------"
HEADER = "# Databricks notebook source"
EXPECTED = {
    "01_quickstart",
    "02_exactly_once_source_to_kafka",
    "03_kafka_to_delta",
    "04_offsets_management",
}


def python_cells(source: str) -> list[str]:
    """The notebook's code cells; `# MAGIC` cells (markdown, %pip) are Databricks-only."""
    assert source.startswith(HEADER), "not a Databricks notebook in source format"
    cells = [cell.strip() for cell in source[len(HEADER) :].split(SEPARATOR)]
    return [
        cell
        for cell in cells
        if cell and not all(line.startswith("# MAGIC") for line in cell.splitlines())
    ]


def test_notebooks_are_present() -> None:
    assert {notebook.stem for notebook in NOTEBOOKS} >= EXPECTED


def code_cells(notebook: Path) -> list[str]:
    """Every cell but the markdown ones, `%pip` cells included."""
    cells = [cell.strip() for cell in notebook.read_text()[len(HEADER) :].split(SEPARATOR)]
    return [cell for cell in cells if cell and not cell.startswith("# MAGIC %md")]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_installs_the_wheel_make_dist_builds_first(notebook: Path) -> None:
    widget, install, *_ = code_cells(notebook)
    namespace: dict[str, Any] = {}
    exec(widget, namespace)  # off Databricks: no widget, nothing to install

    assert namespace["WHEEL"] == f"spark_eos_connect-{__version__}-py3-none-any.whl"
    assert 'dbutils.widgets.text("wheel", str(Path.cwd().parent / "dist" / WHEEL))' in widget
    assert namespace["wheel"] == ""
    assert install == "# MAGIC %pip install $wheel"


def stop_leftovers(spark: Any, namespace: dict[str, Any]) -> None:
    """Stop what a failed notebook left running: streaming queries and child processes."""
    for query in spark.streams.active:
        query.stop()
    for value in namespace.values():
        if isinstance(value, subprocess.Popen) and value.poll() is None:
            value.terminate()
            value.wait(30)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(
    notebook: Path, spark: Any, bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_BOOTSTRAP_SERVERS", bootstrap_servers)
    namespace: dict[str, Any] = {"spark": spark, "__name__": "__notebook__"}
    try:
        for index, cell in enumerate(python_cells(notebook.read_text())):
            code = compile(cell, f"{notebook.name}[cell {index}]", "exec")
            exec(code, namespace)
    finally:
        stop_leftovers(spark, namespace)
