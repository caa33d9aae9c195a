"""The driver JVM's class data sharing archive: where it lives and when a launch uses it."""

from __future__ import annotations

from pathlib import Path

from spark_eos_connect.spark.class_archive import (
    CONF_DIR_ENV,
    archive_file,
    archive_key,
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
    env: dict[str, str] = {}
    assert launch_options(env, tmp_path) == ""
    conf = Path(env[CONF_DIR_ENV])
    assert conf == tmp_path / "spark-conf"
    assert conf.is_dir() and not any(conf.iterdir())


def test_an_archive_for_this_jdk_and_spark_is_mapped(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    archive = archive_file(env, tmp_path)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    options = launch_options(env, tmp_path).split()
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert "-Xlog:cds=off" in options  # a stale archive is skipped without a word


def test_a_users_conf_dir_is_kept_and_then_no_archive_is_used(tmp_path: Path) -> None:
    theirs = tmp_path / "their-conf"
    env = {CONF_DIR_ENV: str(theirs)}
    archive = archive_file(env, tmp_path)
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    assert launch_options(env, tmp_path) == ""
    assert env[CONF_DIR_ENV] == str(theirs)


def test_the_empty_conf_dir_is_made_once(tmp_path: Path) -> None:
    assert empty_conf_dir(tmp_path) == empty_conf_dir(tmp_path)
