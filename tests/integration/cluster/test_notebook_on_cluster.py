"""A notebook as a Databricks cluster runs it: its Python cells, in order, in a driver whose
SparkSession is the standalone cluster's (the notebook only registers `eosconnect` with it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ..notebooks.test_notebooks import NOTEBOOKS, python_cells
from .conftest import CLUSTER_MARKS, Submitted
from .standalone import StandaloneCluster
from .test_jobs_on_cluster import assert_ran_on

pytestmark = CLUSTER_MARKS

CLUSTER_SESSION = """\
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()  # the cluster's session, as on Databricks
"""


def notebook_script(notebook: Path, folder: Path) -> Path:
    """The notebook's Python cells after a cell that takes the cluster's session."""
    script = folder / f"{notebook.stem}_on_cluster.py"
    script.write_text("\n\n".join([CLUSTER_SESSION, *python_cells(notebook.read_text())]) + "\n")
    return script


def test_exactly_once_notebook_on_the_cluster_session(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    [notebook] = [n for n in NOTEBOOKS if n.stem == "02_exactly_once_source_to_kafka"]
    monkeypatch.setenv("EOSCONNECT_BOOTSTRAP_SERVERS", bootstrap_servers)  # the widget's fallback

    job = submit(str(notebook_script(notebook, tmp_path)))
    output = job.wait(300)

    assert job.process.returncode == 0, output[-4000:]
    assert "120 records, 120 distinct" in output  # the notebook's own exactly-once check ran
    assert_ran_on(spark_cluster, job.event_log(), executors=1)
