"""A class data sharing archive for the driver JVMs the project starts (faster start-up).

Most of a local session's start is the driver JVM loading and verifying Spark's classes
(bare session plus a first Spark job on the development machine, quiet: 8.4-8.9 s). A dynamic
CDS archive (`-XX:ArchiveClassesAtExit`, JDK 13+) keeps those classes parsed and verified
in a file the next JVM maps: with it the same session and job took 4.4-5.1 s.

`make setup` trains the archive once (`spark.class_archive_training`). Sessions this process
starts use it (`launch_options`) when it exists; the JVM itself checks that the JDK and
every jar are the ones it was made with and otherwise runs without it, silently.

The JVM refuses to archive classes when a non-empty folder is on the class path, and
Spark puts its configuration folder there (pyspark's `conf/`, which holds the
`spark-defaults.conf` that `make setup` writes for spark-submit and notebooks). The sessions
the project builds set their own configuration (`spark.session.plan_session`), so they start
with an empty configuration folder of the project's, unless `$SPARK_CONF_DIR` names one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from spark_eos_connect.jvm.jars import cache_root

CONF_DIR_ENV = "SPARK_CONF_DIR"
QUIET_CDS_LOGGING = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""A missing or stale archive is not an error: the JVM starts without it, and says nothing."""


def empty_conf_dir(root: Path | None = None) -> Path:
    """The project's empty Spark configuration folder (created when missing)."""
    folder = (root or cache_root()) / "spark-conf"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def archive_key(java: str, jars: list[tuple[str, int]]) -> str:
    """What an archive is valid for: the `java` binary's real path and Spark's jars (name,
    size), as a short digest."""
    text = "\n".join([java, *(f"{name} {size}" for name, size in sorted(jars))])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _java_binary(env: Mapping[str, str]) -> str:
    """The `java` Spark's launcher runs: `$JAVA_HOME/bin/java`, else the one on `PATH`."""
    home = env.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java") or "java"
    return os.path.realpath(java)


def _spark_jars() -> list[tuple[str, int]]:
    """pyspark's jars (the driver's class path), found without importing pyspark."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return []
    folder = Path(spec.origin).parent / "jars"
    return [(jar.name, jar.stat().st_size) for jar in folder.glob("*.jar")]


def archive_file(env: Mapping[str, str] | None = None, root: Path | None = None) -> Path:
    """Where the archive for this JDK and this pyspark lives (it may not exist)."""
    key = archive_key(_java_binary(os.environ if env is None else env), _spark_jars())
    return (root or cache_root()) / "cds" / f"spark-driver-{key}.jsa"


def java_options(archive: Path) -> str:
    """The driver JVM's options that map `archive`."""
    return f"-XX:SharedArchiveFile={archive} {QUIET_CDS_LOGGING}"


def launch_options(env: Mapping[str, str], root: Path | None = None) -> tuple[str | None, str]:
    """For a driver JVM started from `env`: the configuration folder to start it with (None:
    `$SPARK_CONF_DIR` is set, keep it) and the JVM options that map the archive ('' when
    there is none, or the configuration folder is someone else's)."""
    if env.get(CONF_DIR_ENV):
        return None, ""
    archive = archive_file(env, root)
    options = java_options(archive) if archive.is_file() else ""
    return str(empty_conf_dir(root)), options


@contextlib.contextmanager
def driver_launch(root: Path | None = None) -> Iterator[str]:
    """Around the start of a driver JVM by this process: `$SPARK_CONF_DIR` is the project's
    empty folder while it starts (unless set), and the JVM options to give it are yielded.
    The variable is put back afterwards, so that a spark-submit this process runs later
    still reads pyspark's `spark-defaults.conf`."""
    conf_dir, options = launch_options(os.environ, root)
    if conf_dir is None:
        yield options
        return
    os.environ[CONF_DIR_ENV] = conf_dir
    try:
        yield options
    finally:
        os.environ.pop(CONF_DIR_ENV, None)
