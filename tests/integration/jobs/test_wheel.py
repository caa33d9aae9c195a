"""`make dist` builds a wheel and an sdist; the wheel, installed into a fresh venv, gives
`eosconnect`, the jobs and the data source, with the poms and the log4j file."""

from __future__ import annotations

import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from .wheel import REPO, build, dist_recipe, fresh_venv, only_wheel

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("wheel")]
"""One worker runs this module: each worker builds `dist` once, and two builds at once in the
same source tree remove each other's sdist release tree (`spark_eos_connect-<version>/`), as a
CI run showed."""

JOBS = ("source_to_kafka", "kafka_to_delta", "kafka_to_sink", "end_to_end")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def venv_bin(dist: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("venv") / "venv", only_wheel(dist))


def run(bin_dir: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command of the fresh venv, away from the repository (nothing imported from it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def package_files() -> set[str]:
    """What the wheel must hold: every module and data file of the package in this tree."""
    root = REPO / "spark_eos_connect"
    wanted = {".py", ".xml", ".properties"}
    return {
        str(path.relative_to(REPO))
        for path in root.rglob("*")
        if path.suffix in wanted and "__pycache__" not in path.parts
    }


def test_make_dist_builds_a_wheel_and_an_sdist(dist: list[Path]) -> None:
    assert dist_recipe() == ["rm -rf dist", "$(PY) -m build --outdir dist ."]
    assert [f.name for f in dist] == [
        "spark_eos_connect-0.1.0-py3-none-any.whl",
        "spark_eos_connect-0.1.0.tar.gz",
    ]
    with zipfile.ZipFile(only_wheel(dist)) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("spark_eos_connect-0.1.0.dist-info/METADATA").decode()
        entry_points = wheel.read("spark_eos_connect-0.1.0.dist-info/entry_points.txt").decode()
    assert package_files() <= names
    assert "spark_eos_connect/jvm/delta-pom.xml" in names
    assert "spark_eos_connect/jvm/log4j2.properties" in names
    assert {f"spark_eos_connect/apps/jobs/{job}.py" for job in JOBS} <= names
    assert "Requires-Dist: pyspark==4.2.0" in metadata
    assert "eosconnect = spark_eos_connect.apps.cli:main" in entry_points
    with tarfile.open(next(f for f in dist if f.suffix == ".gz")) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {f"jobs/{job}.py" for job in JOBS} <= members
    assert "notebooks/01_quickstart.py" in members and "setup.cfg" in members


def test_the_installed_wheel_runs_the_cli_and_the_jobs(venv_bin: Path, tmp_path: Path) -> None:
    where = run(
        venv_bin,
        "python",
        "-c",
        "import spark_eos_connect.jvm.jars as j, spark_eos_connect.spark.datasource as d;"
        "print(j.__file__); print(j._pom_path('delta').is_file());"
        "print(d.EosConnectDataSource.name())",
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr[-3000:]
    module, pom_found, source_name = where.stdout.split()
    assert module.startswith(str(venv_bin.parent)), module  # the wheel's copy, not the repo's
    assert (pom_found, source_name) == ("True", "eosconnect")

    cli = run(venv_bin, "eosconnect", "--help", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert "rest" in cli.stdout and "kafka" in cli.stdout

    for job in JOBS:
        shown = run(
            venv_bin, "python", "-m", f"spark_eos_connect.apps.jobs.{job}", "--help", cwd=tmp_path
        )
        assert shown.returncode == 0, shown.stderr[-3000:]
        assert "--master" in shown.stdout and "--bootstrap-servers" in shown.stdout

    # The spark-submit wrapper, copied away from the repository, runs on the wheel's code.
    wrapper = tmp_path / "source_to_kafka.py"
    wrapper.write_text((REPO / "jobs" / "source_to_kafka.py").read_text())
    shown = run(venv_bin, "python", str(wrapper), "--help", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "exactly once (KIP-618)" in " ".join(shown.stdout.split())
