"""Where the throwaway cluster finds PostgreSQL's server tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.errors import SetupError
from spark_eos_connect.testing.postgres import PG_BIN_ENV, find_bin_dir


def _tools(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for tool in ("initdb", "pg_ctl"):
        (folder / tool).write_text("#!/bin/sh\n")
        (folder / tool).chmod(0o755)
    return folder


def test_the_newest_debian_package_wins(tmp_path: Path) -> None:
    _tools(tmp_path / "9.6" / "bin")
    newest = _tools(tmp_path / "15" / "bin")
    _tools(tmp_path / "13" / "bin")
    assert find_bin_dir({"PATH": ""}, debian_root=str(tmp_path)) == newest


def test_the_environment_variable_names_another_install(tmp_path: Path) -> None:
    _tools(tmp_path / "15" / "bin")
    named = _tools(tmp_path / "custom")
    env = {PG_BIN_ENV: str(named), "PATH": ""}
    assert find_bin_dir(env, debian_root=str(tmp_path)) == named


def test_a_named_folder_without_the_tools_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match=PG_BIN_ENV):
        find_bin_dir({PG_BIN_ENV: str(tmp_path), "PATH": ""}, debian_root=str(tmp_path))


def test_without_any_install_the_error_names_the_package(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="apt-get install -y postgresql-15"):
        find_bin_dir({"PATH": str(tmp_path)}, debian_root=str(tmp_path / "none"))
