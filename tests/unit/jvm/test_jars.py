"""The jar cache's layout (a Connect plugin bundle is a `plugin.path` holding one plugin folder),
and what setup writes into pyspark's `conf/`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm import jars


def fetched(cache: Path, bundle: str, folder: str) -> Path:
    """A cache that already holds `bundle` (its marker names the shipped pom's digest), with
    one jar in `folder` under the bundle's folder; no Maven run is needed to use it."""
    target = cache / bundle
    (target / folder).mkdir(parents=True)
    (target / folder / "a.jar").write_bytes(b"")
    digest = jars._pom_digest(jars._pom_path(bundle))
    (target / jars._MARKER).write_text(digest + "\n")
    return target


def test_the_debezium_plugin_is_a_plugin_path_of_one_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_JARS_DIR", str(tmp_path))
    target = fetched(tmp_path, "debezium", jars.PLUGIN_BUNDLES["debezium"])
    assert "debezium" in jars.BUNDLES and "debezium" not in jars.SESSION_BUNDLES
    assert jars.plugin_path("debezium") == target
    assert jars.jar_files("debezium") == [target / "debezium-connector-postgres" / "a.jar"]


def test_the_debezium_pom_pins_3_6_1_final_without_kafkas_own_jars() -> None:
    pom = jars._pom_path("debezium").read_text()
    assert "<artifactId>debezium-connector-postgres</artifactId>" in pom
    assert "<version>3.6.1.Final</version>" in pom
    assert "<groupId>org.apache.kafka</groupId>" in pom  # excluded: the worker provides them


def test_a_bundle_that_is_no_plugin_has_no_plugin_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_JARS_DIR", str(tmp_path))
    with pytest.raises(SetupError, match="not a Connect plugin"):
        jars.plugin_path("connect")


def _sourced_driver_python(spark_env: Path, preset: str | None) -> str:
    """What `$PYSPARK_DRIVER_PYTHON` is after Spark's launch scripts source `spark_env`
    (they do so with `set -a`), with the variable `preset` or unset before."""
    env = {"PATH": os.environ["PATH"]}
    if preset is not None:
        env["PYSPARK_DRIVER_PYTHON"] = preset
    script = f'set -a; . "{spark_env}"; set +a; bash -c \'echo "$PYSPARK_DRIVER_PYTHON"\''
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_spark_submits_driver_jvm_gets_the_quiet_interpreter_unless_one_is_given(
    tmp_path: Path,
) -> None:
    spark_env = jars.write_spark_env(Path("/env/bin/eosconnect-spark-python"), tmp_path)

    assert spark_env == tmp_path / "spark-env.sh"
    assert _sourced_driver_python(spark_env, None) == "/env/bin/eosconnect-spark-python"
    assert _sourced_driver_python(spark_env, "/opt/python3") == "/opt/python3"


def test_a_shell_without_the_variable_finds_the_folder_setup_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    environment = tmp_path / "venv"
    monkeypatch.delenv(jars.JARS_DIR_ENV, raising=False)
    assert jars.cache_root(str(environment)).name == "jars"  # nothing recorded: ~/.cache's

    monkeypatch.setenv(jars.JARS_DIR_ENV, str(tmp_path / "repo" / ".jars"))
    jars.record_cache_root(str(environment))
    monkeypatch.delenv(jars.JARS_DIR_ENV)

    assert jars.cache_root(str(environment)) == (tmp_path / "repo" / ".jars").resolve()
    monkeypatch.setenv(jars.JARS_DIR_ENV, str(tmp_path / "other"))
    assert jars.cache_root(str(environment)) == (tmp_path / "other").resolve()  # the variable wins
