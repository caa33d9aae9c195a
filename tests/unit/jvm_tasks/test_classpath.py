"""The JVM task host's command: its jars, its JVM options (defaults or the environment's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.jars import JARS_DIR_ENV
from spark_eos_connect.jvm_tasks.classpath import (
    JVM_FLAGS,
    JVM_OPTIONS_ENV,
    MAIN_CLASS,
    task_host_command,
)


@pytest.fixture
def built_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A jars folder holding a (stand-in) task host jar."""
    folder = tmp_path / "task-host"
    folder.mkdir()
    (folder / "task-host.jar").write_bytes(b"")
    monkeypatch.setenv(JARS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(JVM_OPTIONS_ENV, raising=False)
    return folder


def jvm_options(command: list[str]) -> list[str]:
    """The options between `java` and the first `-D` (the log settings)."""
    options = command[1:]
    return options[: next(i for i, o in enumerate(options) if o.startswith("-D"))]


def test_the_host_runs_its_main_class_over_the_plugin_path_with_the_default_options(
    built_host: Path,
) -> None:
    command = task_host_command(["/plugins/a", "/plugins/b"])

    assert jvm_options(command) == list(JVM_FLAGS)
    assert command[-5:] == ["-cp", f"{built_host}/*", MAIN_CLASS, "/plugins/a", "/plugins/b"]


def test_the_environments_options_replace_the_defaults(
    built_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(JVM_OPTIONS_ENV, "-Xmx512m  -XX:+UseG1GC")

    assert jvm_options(task_host_command([])) == ["-Xmx512m", "-XX:+UseG1GC"]


def test_an_unbuilt_host_names_make_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JARS_DIR_ENV, str(tmp_path))

    with pytest.raises(SetupError, match="make setup"):
        task_host_command([])
