"""`make test` keeps the Spark cluster tests on one pytest-xdist worker (`--dist loadgroup` and
their `xdist_group` mark): checked on a tiny suite with the installed pytest and xdist, since a
release of either has broken the grouping before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GROUPED = """\
import os

import pytest

pytestmark = pytest.mark.xdist_group("cluster")


def test_{name}_one():
    print("worker", os.environ["PYTEST_XDIST_WORKER"])


def test_{name}_two():
    print("worker", os.environ["PYTEST_XDIST_WORKER"])
"""


def test_loadgroup_runs_a_group_on_one_worker(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"test_{name}.py").write_text(GROUPED.format(name=name))

    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-s"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stdout[-3000:]
    passed = [line for line in result.stdout.splitlines() if " PASSED " in line]
    assert len(passed) == 6, result.stdout[-3000:]
    assert all(line.rstrip().endswith("@cluster") for line in passed), passed
    assert len({line.split("]")[0] for line in passed}) == 1, passed  # one [gwN] for all
