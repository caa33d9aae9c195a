"""`eosconnect-spark-python`: Spark's Python processes import the installed pyspark."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pyspark
import pytest

from spark_eos_connect.spark.worker_python import (
    names_this_interpreter,
    without_installed_zips,
    worker_python,
)

HOME = os.path.realpath("/opt/venv/site-packages/pyspark")
LIB = os.path.join(HOME, "python", "lib")


def installed_as(found: dict[str, str]):  # type: ignore[no-untyped-def]
    def installed(name: str, path: Sequence[str]) -> str | None:
        return found.get(name)

    return installed


def test_the_installed_packages_zip_copies_are_dropped() -> None:
    path = [f"{LIB}/pyspark.zip", f"{LIB}/py4j-0.10.9.9-src.zip", "/work", "/lib/python311.zip"]
    kept = without_installed_zips(path, installed_as({"pyspark": HOME, "py4j": "/opt/py4j"}))
    assert kept == ["/work", "/lib/python311.zip"]


def test_a_spark_distributions_zip_is_kept() -> None:
    path = ["/opt/spark/python/lib/pyspark.zip", "/opt/spark/python/lib/py4j-0.10.9.9-src.zip"]
    assert without_installed_zips(path, installed_as({"pyspark": HOME, "py4j": "/x"})) == path


def test_nothing_is_dropped_without_an_installed_pyspark() -> None:
    path = [f"{LIB}/pyspark.zip", "/work"]
    assert without_installed_zips(path, installed_as({})) == path


def test_py4j_zip_is_kept_when_py4j_is_not_installed() -> None:
    path = [f"{LIB}/pyspark.zip", f"{LIB}/py4j-0.10.9.9-src.zip"]
    kept = without_installed_zips(path, installed_as({"pyspark": HOME}))
    assert kept == [f"{LIB}/py4j-0.10.9.9-src.zip"]


def test_this_interpreter_is_named_by_its_own_path_or_by_a_name_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert names_this_interpreter(sys.executable)
    link = tmp_path / "python-here"
    link.symlink_to(sys.executable)  # another path to the same file: another environment
    assert not names_this_interpreter(str(link))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    assert names_this_interpreter(os.path.basename(sys.executable))
    assert not names_this_interpreter("no-such-python")


def run(args: list[str], cwd: Path) -> str:
    """The module run as Spark runs `$PYSPARK_PYTHON`, with Spark's zips first on the path."""
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    zips = [str(lib / "pyspark.zip"), *map(str, lib.glob("py4j-*.zip"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(zips)}
    command = [sys.executable, "-m", "spark_eos_connect.spark.worker_python", *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_code_imports_pyspark_from_the_package_not_the_zip(tmp_path: Path) -> None:
    code = "import sys, pyspark.serializers as s; print(s.__file__, sys.argv)"
    out = run(["-c", code, "x"], tmp_path)
    assert out.split() == [str(Path(pyspark.__file__).parent / "serializers.py"), "['-c',", "'x']"]


def test_a_module_runs_as_main_with_its_arguments(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(
        "import sys, pyspark\nif __name__ == '__main__':\n"
        "    print(sys.argv[1:], pyspark.__file__.endswith('zip') or 'zip' in pyspark.__file__)\n"
    )
    assert run(["-m", "probe", "a", "b"], tmp_path).strip() == "['a', 'b'] False"


def test_spark_is_given_the_command_when_it_is_installed() -> None:
    command = Path(sys.executable).parent / "eosconnect-spark-python"
    assert worker_python() == (str(command) if command.exists() else sys.executable)
