"""The interpreter Spark runs for its Python processes: Python, importing the installed pyspark.

Spark starts its Python processes (the data source planners, the streaming source runner,
each kind of worker's daemon) as `$PYSPARK_PYTHON -m <module> [args]` with
`$SPARK_HOME/python/lib/pyspark.zip` first on `PYTHONPATH`. When pyspark is pip-installed,
`SPARK_HOME` is the installed package itself and the zip holds the same sources, but Python's
zip importer compiles every module it loads from source and caches no bytecode: on the
development machine `import pyspark.worker` takes 0.80 s from the zip and 0.15 s from the
package, and a job started from nothing starts about ten such processes, most of them one
after the other, before its first record.

The `eosconnect-spark-python` command (this module's `main`) is that interpreter for the
sessions the project starts (`session.use_this_interpreter_for_workers`). It drops the zip
copies from `sys.path` only when they belong to the pyspark that is installed (the zip inside
the installed package's own folder; py4j's when py4j is installed too), so a Spark
distribution's own zip is kept; then it runs `-m module` or `-c code` as Python would, and
hands any other command line to the interpreter itself. Nothing of pyspark is imported before
the path is fixed (the package's `__init__` imports only `version`). pyspark's worker daemon
(`-m pyspark.daemon`, which Spark starts for task workers and, whatever
`spark.python.daemon.module` says, for the data source planners) runs as
`spark_eos_connect.spark.quiet_daemon`: the same daemon, without a `BrokenPipeError` traceback
when the JVM has closed a worker's socket.
"""

from __future__ import annotations

import importlib.machinery
import os
import runpy
import shutil
import sys
from collections.abc import Callable, Sequence

SPARK_LIB = ("python", "lib")
"""Where a Spark home keeps `pyspark.zip` and py4j's source zip."""
COMMAND = "eosconnect-spark-python"
"""The console script installed with the package (`setup.cfg`)."""
RUN_INSTEAD = {"pyspark.daemon": "spark_eos_connect.spark.quiet_daemon"}
"""Modules Spark asks for (`-m`) and what runs in their place."""


def _installed(name: str, path: Sequence[str]) -> str | None:
    """The folder of package `name` found on `path` (zip files skipped), or None."""
    plain = [entry for entry in path if not entry.endswith(".zip")]
    spec = importlib.machinery.PathFinder.find_spec(name, plain)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(next(iter(spec.submodule_search_locations)))


def without_installed_zips(
    path: Sequence[str], installed: Callable[[str, Sequence[str]], str | None] = _installed
) -> list[str]:
    """`path` without the zip copies of pyspark and py4j that the installed pyspark ships in
    its own `python/lib` folder (all kept when pyspark is not installed)."""
    pyspark_home = installed("pyspark", path)
    if pyspark_home is None:
        return list(path)
    lib = os.path.join(pyspark_home, *SPARK_LIB)
    has_py4j = installed("py4j", path) is not None

    def dropped(entry: str) -> bool:
        if not entry.endswith(".zip") or os.path.dirname(os.path.realpath(entry)) != lib:
            return False
        name = os.path.basename(entry)
        return name == "pyspark.zip" or (has_py4j and name.startswith("py4j-"))

    return [entry for entry in path if not dropped(entry)]


def main(argv: Sequence[str] | None = None) -> None:
    """Run `-m module [args]` or `-c code [args]` with the path fixed; exec the interpreter for
    any other command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] not in ("-m", "-c"):
        os.execv(sys.executable, [sys.executable, *args])
    flag, target, rest = args[0], args[1], args[2:]
    path = without_installed_zips(sys.path[1:])
    if flag == "-m":
        sys.path[:] = [os.getcwd(), *path]
        sys.argv = [target, *rest]
        runpy.run_module(RUN_INSTEAD.get(target, target), run_name="__main__", alter_sys=True)
    else:
        sys.path[:] = ["", *path]
        sys.argv = ["-c", *rest]
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})


def worker_python() -> str:
    """The command for `$PYSPARK_PYTHON`: `eosconnect-spark-python` beside this interpreter,
    or the interpreter itself when the command is not installed there."""
    command = os.path.join(os.path.dirname(sys.executable), COMMAND)
    return command if os.access(command, os.X_OK) else sys.executable


def names_this_interpreter(command: str) -> bool:
    """Whether `command` (a path, or a name looked up on `$PATH`) is this very interpreter's
    path: symbolic links are not followed, as a virtual environment's `python` links to the
    base interpreter, which lacks the environment's packages."""
    found = command if os.sep in command else shutil.which(command)
    return found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)


if __name__ == "__main__":
    main()
