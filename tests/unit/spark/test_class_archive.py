"""The driver JVM's class data sharing archive: where it lives and when a launch uses it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_eos_connect.spark.class_archive import (
    CONF_DIR_ENV,
    archive_file,
    archive_key,
    driver_launch,
    empty_conf_dir,
    launch_options,
)

JARS = [("spark-core_2.13-4.2.0.jar", 1000), ("scala-library-2.13.16.jar", 2000)]


def test_the_key_follows_the_jdk_and_every_jar() -> None:
    key = archive_key("/usr/lib/jvm/17/bin/java", JARS)
    assert key == archive_key("/usr/lib/jvm/17/bin/java", list(reversed(JARS)))
    assert key != archive_key("/usr/lib/jvm/21/bin/java", JARS)
    assert key != archive_key("/usr/lib/jvm/17/bin/java", [JARS[0], (JARS[1][0], 2001)])
    assert key != archive_key("/usr/lib/jvm/17/bin/java", JARS[:1])


def test_without_an_archive_the_launch_only_gets_the_empty_conf_dir(tmp_path: Path) -> None:
    conf_dir, options = launch_options({}, tmp_path)
    assert options == ""
    assert conf_dir == str(tmp_path / "spark-conf")
    assert Path(conf_dir).is_dir() and not any(Path(conf_dir).iterdir())


def put_archive(root: Path) -> Path:
    archive = archive_file({}, root)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    return archive


def test_an_archive_for_this_jdk_and_spark_is_mapped(tmp_path: Path) -> None:
    archive = put_archive(tmp_path)
    conf_dir, options = launch_options({}, tmp_path)
    assert conf_dir == str(empty_conf_dir(tmp_path))
    assert f"-XX:SharedArchiveFile={archive}" in options.split()
    assert "-Xlog:cds=off" in options.split()  # a stale archive is skipped without a word


def test_a_users_conf_dir_is_kept_and_then_no_archive_is_used(tmp_path: Path) -> None:
    put_archive(tmp_path)
    assert launch_options({CONF_DIR_ENV: str(tmp_path / "theirs")}, tmp_path) == (None, "")


def test_the_conf_dir_is_set_only_while_the_jvm_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CONF_DIR_ENV, raising=False)
    put_archive(tmp_path)
    with driver_launch(tmp_path) as options:
        assert os.environ[CONF_DIR_ENV] == str(empty_conf_dir(tmp_path))
        assert "-XX:SharedArchiveFile=" in options
    assert CONF_DIR_ENV not in os.environ  # a later spark-submit reads pyspark's defaults


def test_a_conf_dir_the_user_set_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONF_DIR_ENV, str(tmp_path / "theirs"))
    with driver_launch(tmp_path) as options:
        assert options == ""
    assert os.environ[CONF_DIR_ENV] == str(tmp_path / "theirs")
