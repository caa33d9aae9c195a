"""Every notebook runs top to bottom on the local stack (its Python cells, in order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

NOTEBOOKS = sorted((Path(__file__).resolve().parents[3] / "notebooks").glob("*.py"))
SEPARATOR = "# COMMAND ----------"
HEADER = "# Databricks notebook source"


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
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(
    notebook: Path, spark: Any, bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_BOOTSTRAP_SERVERS", bootstrap_servers)
    namespace: dict[str, Any] = {"spark": spark, "__name__": "__notebook__"}
    for index, cell in enumerate(python_cells(notebook.read_text())):
        code = compile(cell, f"{notebook.name}[cell {index}]", "exec")
        exec(code, namespace)
