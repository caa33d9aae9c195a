"""Where the JVM task host's jars are and how its JVM is started."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.jars import cache_root

MAIN_CLASS = "io.github.sparkeosconnect.taskhost.TaskHostMain"
JVM_FLAGS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xms16m",
    "-Xmx1g",
    "-XX:MinHeapFreeRatio=10",
    "-XX:MaxHeapFreeRatio=20",
)
"""A fast start (notes/java-plugins.md: C1 only and the serial collector), and a heap that starts
small, grows only as a plugin needs and gives back what it no longer does: a task that
overrides `commitRecord` (Debezium's does) keeps its micro-batch's records until the
transaction commits, about 2 KB each for Debezium (a 64 MB heap ran out at 50,000 rows in one
micro-batch); 1 GB is a Connect worker's order. The free ratios kept the file bench's host at
117 MiB peak RSS where the collector's defaults let it reach 146 MiB."""
JVM_OPTIONS_ENV = "EOSCONNECT_TASK_HOST_OPTS"
"""JVM options of the task hosts in place of `JVM_FLAGS` (a larger heap for a plugin that
needs one, say), as Connect's `KAFKA_HEAP_OPTS` and `KAFKA_JVM_PERFORMANCE_OPTS` are for its
worker; executors get it through `spark.executorEnv.EOSCONNECT_TASK_HOST_OPTS`."""
LOG_LEVEL_ENV = "EOSCONNECT_TASK_HOST_LOG_LEVEL"
"""The host's log level (slf4j-simple's: trace, debug, info, warn, error); `warn` when unset,
as Spark's console is: plugins log their whole configuration at `info`."""


def task_host_folder() -> Path:
    """The folder `make setup` builds the task host into (its jar and dependencies)."""
    return cache_root() / "task-host"


def task_host_command(plugin_path: list[str]) -> list[str]:
    """The command that starts a task host over the `plugin.path` entries `plugin_path`."""
    folder = task_host_folder()
    if not (folder / "task-host.jar").is_file():
        raise SetupError(
            f"the JVM task host is not built ({folder / 'task-host.jar'} is missing): run "
            "`make setup`, which builds java/task-host"
        )
    java = shutil.which("java")
    if java is None:
        raise SetupError("Java plugins need a Java 17+ runtime (`java`) on the PATH")
    level = os.environ.get(LOG_LEVEL_ENV) or "warn"
    logging = [
        f"-Dorg.slf4j.simpleLogger.defaultLogLevel={level}",
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
    ]
    flags = shlex.split(os.environ.get(JVM_OPTIONS_ENV, "")) or list(JVM_FLAGS)
    return [java, *flags, *logging, "-cp", f"{folder}/*", MAIN_CLASS, *plugin_path]
