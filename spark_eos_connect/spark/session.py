"""The SparkSession the jobs, the demo and the tests use: Delta from local jar files (no Ivy at
run time), the `eosconnect` data source registered, on the master it was given.

Which master, first match wins (`plan_session`, pure):

1. a running session (a notebook's, Databricks') is reused as it is;
2. under `spark-submit`, the master and configuration spark-submit was given;
3. `master=` (a job's `--master`) or `spark.master` in `extra` (a job's `--conf`);
4. `--master` in `$PYSPARK_SUBMIT_ARGS`, then `$SPARK_MASTER`;
5. otherwise `local[cores,4]` (4 attempts per task, as on a cluster).

Tuning for one machine (no UI, `cores` shuffle partitions) applies to a local master only.

A driver JVM this process starts maps the class archive `make setup` trains
(`spark.class_archive`: about half of a bare session's start).

Jobs quiet Spark's own logging from the start (`jvm/log4j2-spark.properties`: warnings and
errors with their stacks to the job's log file, one line per lost task on the console);
`--verbose`, or a log4j configuration file given in `spark.driver.extraJavaOptions`
(spark-submit `--driver-java-options`), keeps Spark's logs.
"""

from __future__ import annotations

import importlib
import os
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.spark import class_archive

DELTA_SESSION_CONF: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
SUBMIT_GATEWAY_ENV = "PYSPARK_GATEWAY_PORT"
"""Set by spark-submit for the Python driver it starts: its JVM is already running."""
SUBMIT_ARGS_ENV = "PYSPARK_SUBMIT_ARGS"
MASTER_ENV = "SPARK_MASTER"
LOCAL_DEFAULT = "local default"
DELTA_JAR_PREFIX = "delta-spark_"
LOG4J_CONFIG_FLAG = "-Dlog4j2.configurationFile"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
QUIET_LOG4J_FILE = "log4j2-spark.properties"
"""In `spark_eos_connect.jvm`: the logging of a quiet job (a log file, lost tasks)."""
JOB_LOG_PROPERTY = "eosconnect.job.log"
"""The Java system property naming a quiet job's log file (the log4j2 file reads it)."""
JOB_LOG_DIR_ENV = "EOSCONNECT_LOG_DIR"
"""Where quiet jobs write their Spark logs (default: `eosconnect-logs` in the temp folder)."""


@dataclass(frozen=True)
class SessionPlan:
    """How to get the session: reuse a running one, or build one with `conf`.

    `master` is where it runs (None when unknown), `origin` who chose it, `notes` what the
    caller should tell the user (configuration that could not be applied).
    """

    master: str | None
    origin: str
    conf: dict[str, str] = field(default_factory=dict)
    reuse: bool = False
    submitted: bool = False
    notes: tuple[str, ...] = ()

    @property
    def local(self) -> bool:
        """Driver and executors in this one JVM."""
        return self.master is not None and is_local_master(self.master)

    def describe(self) -> str:
        """One line for the job's output."""
        return f"Spark master {self.master or 'unknown'} ({self.origin})"


def is_local_master(master: str) -> bool:
    """`local`, `local[N]`, `local[N,F]`, `local[*]`: one JVM. `local-cluster[...]` is not."""
    return master == "local" or master.startswith("local[")


def submit_args_master(submit_args: str | None) -> str | None:
    """The `--master` in a `PYSPARK_SUBMIT_ARGS` string, if any."""
    argv = shlex.split(submit_args or "")
    for index, arg in enumerate(argv):
        if arg == "--master" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--master="):
            return arg.split("=", 1)[1]
    return None


def choose_master(
    requested: str | None,
    conf_master: str | None,
    submitted_master: str | None,
    env: Mapping[str, str],
    cores: int = 2,
) -> tuple[str, str, bool]:
    """`(master, origin, set_on_builder)` following the order in the module docstring."""
    asked = [
        (value, where)
        for value, where in ((requested, "--master"), (conf_master, "--conf"))
        if value is not None and value != ""
    ]
    if len({value for value, _ in asked}) > 1:
        raise ConfigError(f"two masters asked for: {asked[0][0]} and {asked[1][0]}")
    if submitted_master is not None:
        for value, where in asked:
            if value != submitted_master:
                raise ConfigError(
                    f"{where} asks for master {value} but spark-submit runs this job on "
                    f"{submitted_master}: give the master to spark-submit (--master) instead"
                )
        return submitted_master, "spark-submit", False
    if asked:
        return asked[0][0], asked[0][1], True
    from_args = submit_args_master(env.get(SUBMIT_ARGS_ENV))
    if from_args:
        return from_args, f"${SUBMIT_ARGS_ENV}", False
    if env.get(MASTER_ENV):
        return env[MASTER_ENV], f"${MASTER_ENV}", True
    return f"local[{cores},4]", LOCAL_DEFAULT, True


def has_delta_jar(jars: str | None) -> bool:
    """Whether a `spark.jars` value holds Delta's Spark jar."""
    return any(Path(j.strip()).name.startswith(DELTA_JAR_PREFIX) for j in (jars or "").split(","))


LOCAL_CHECKPOINT_FILE_MANAGER = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
)
"""How a local session writes its streaming checkpoints. Spark's default goes through Hadoop's
`FileContext`, which on the local file system (without Hadoop's native library, as pyspark
ships) starts a `chmod` or `readlink` process for most files it writes or renames: about 3 per
micro-batch, 50 ms of a 300 ms micro-batch on the development machine. The `FileSystem` based
manager writes the same files and renames them with the file system's own (atomic) rename."""


ARROW_BATCH_BYTES_UNMEASURED = str(2**31 - 1)
"""`spark.sql.execution.arrow.maxBytesPerBatch` for every session the project builds. Spark
measures the Arrow batch it is filling for a Python data source writer (and every other
Arrow-fed Python function) after each row it adds, unless this bound is exactly Int.MaxValue;
the measurement walks the batch's vectors (`StructVector.setValueCount`) and took about 40% of
the executors' JVM time on a source stream's committed rows (JFR). Batches are then bounded by
`spark.sql.execution.arrow.maxRecordsPerBatch` rows alone (10,000 by default)."""


PYTHON_WORKER_CONF: dict[str, str] = {
    "spark.python.worker.reuse": "true",
    "spark.python.unix.domain.socket.enabled": "true",
    "spark.sql.execution.arrow.maxBytesPerBatch": ARROW_BATCH_BYTES_UNMEASURED,
}
"""How Spark talks to its Python workers, in every session the project builds. Over Spark's
default loopback TCP a reader task's Python worker got the end of its one-row input 40 ms
after the row (Nagle's algorithm meeting delayed acknowledgements): a Unix domain socket
removes that wait from every micro-batch (Generator, 2 tasks, 2,000 records per trigger:
median 172 ms -> 131 ms)."""


LOCAL_FILE_SYSTEM = "org.apache.hadoop.fs.RawLocalFileSystem"
"""`file:` paths of a local session without Hadoop's checksum layer: `LocalFileSystem` writes a
`.crc` file beside each file and renames both, which costs the offsets and commit logs of a
streaming query about 10 ms a micro-batch (Generator, 2,000 records per trigger, median
104 -> 94.5 ms once warm). The files themselves, and their atomic renames, are the same."""


def local_tuning(cores: int) -> dict[str, str]:
    """Settings that suit one machine only."""
    return {
        "spark.ui.enabled": "false",
        "spark.databricks.delta.snapshotPartitions": str(cores),
        "spark.sql.shuffle.partitions": str(cores),
        "spark.sql.streaming.checkpointFileManagerClass": LOCAL_CHECKPOINT_FILE_MANAGER,
        "spark.hadoop.fs.file.impl": LOCAL_FILE_SYSTEM,
    }


def plan_session(
    app_name: str,
    cores: int = 2,
    extra: Mapping[str, str] | None = None,
    master: str | None = None,
    *,
    submitted: Mapping[str, str] | None = None,
    active_master: str | None = None,
    env: Mapping[str, str] | None = None,
    delta_jars: Callable[[], list[str]] = lambda: [],
    delta: bool = True,
) -> SessionPlan:
    """Decide the session (pure: every input is an argument).

    `submitted`: spark-submit's configuration when it started this driver; `active_master`:
    the master of a running SparkContext; `delta_jars`: local paths of Delta's jars (and of
    Spark's Kafka source, which travel with them), called only when they must be added;
    `delta=False`: a session that needs neither (a source job): the plan does not add them,
    and Delta is on only when `spark.jars` already holds it. A session this process starts
    does not read pyspark's `conf/` (where `make setup` writes a `spark-defaults.conf` with
    Delta for spark-submit and notebooks): it starts with the project's empty configuration
    folder and its driver maps the class archive (`spark.class_archive`), unless
    `$SPARK_CONF_DIR` names a folder.
    """
    extra = dict(extra or {})
    conf_master = extra.pop("spark.master", None)
    if active_master is not None:
        ignored = (
            (f"a session is already running on {active_master}: --master ignored",)
            if master or conf_master
            else ()
        )
        return SessionPlan(active_master, "the running session", extra, reuse=True, notes=ignored)
    given = dict(submitted or {})
    chosen, origin, set_master = choose_master(
        master, conf_master, given.get("spark.master") if submitted is not None else None,
        env if env is not None else os.environ, cores,
    )  # fmt: skip
    conf = {
        "spark.app.name": app_name,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        **PYTHON_WORKER_CONF,
    }
    if is_local_master(chosen):
        conf.update(local_tuning(cores))
    if submitted is None:
        conf["spark.driver.memory"] = "2g"  # only when this process starts the JVM
    notes: list[str] = []
    jars = extra.get("spark.jars", given.get("spark.jars", ""))
    if has_delta_jar(jars):
        conf.update(DELTA_SESSION_CONF)
    elif submitted is not None:
        if delta:
            notes.append(
                "Delta's jars are not on the driver's classpath (spark-submit started it "
                "without them): Delta Lake is off; pass them with spark-submit --jars for "
                "Delta jobs"
            )
    elif delta:
        conf["spark.jars"] = ",".join(j for j in [*jars.split(","), *delta_jars()] if j)
        extra.pop("spark.jars", None)  # merged above
        conf.update(DELTA_SESSION_CONF)
    if set_master:
        conf["spark.master"] = chosen
    conf = {k: v for k, v in conf.items() if k not in given}  # spark-submit's settings win
    conf.update(extra)
    return SessionPlan(chosen, origin, conf, submitted=submitted is not None, notes=tuple(notes))


def local_session_conf(
    app_name: str = "spark_eos_connect", cores: int = 2, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The configuration of a local session, for callers that build their own."""
    return plan_session(
        app_name, cores, extra, submitted=None, env={}, delta_jars=_delta_jar_paths
    ).conf


def _delta_jar_paths() -> list[str]:
    """Delta's jars, and Spark's Kafka source's, which come with them (`SESSION_BUNDLES`)."""
    from spark_eos_connect.jvm.jars import session_jar_files

    return [str(path) for path in session_jar_files()]


def submitted_conf() -> dict[str, str] | None:
    """spark-submit's configuration when it started this Python driver, else None."""
    if SUBMIT_GATEWAY_ENV not in os.environ:
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


def _active_master() -> str | None:
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    return None if active is None else str(active.master)


def current_plan(
    app_name: str = "spark_eos_connect",
    cores: int = 2,
    extra: Mapping[str, str] | None = None,
    master: str | None = None,
    delta: bool = True,
) -> SessionPlan:
    """`plan_session` for this process: its environment, spark-submit, a running session."""
    return plan_session(
        app_name,
        cores,
        extra,
        master,
        submitted=submitted_conf(),
        active_master=_active_master(),
        env=os.environ,
        delta_jars=_delta_jar_paths,
        delta=delta,
    )


def wants_quiet_logs(plan: SessionPlan, verbose: bool, submitted: Mapping[str, str]) -> bool:
    """Whether a job should quiet Spark's logging: not when asked to be verbose, not for a
    running session (not the job's to change), not when the user gave a log4j file or a
    `spark.log.level`."""
    if verbose or plan.reuse or "spark.log.level" in {**submitted, **plan.conf}:
        return False
    java_options = plan.conf.get(DRIVER_JAVA_OPTIONS, submitted.get(DRIVER_JAVA_OPTIONS, ""))
    return LOG4J_CONFIG_FLAG not in java_options


def quiet_log_config() -> Path:
    """The log4j2 file of a quiet job."""
    from importlib import resources

    return Path(str(resources.files("spark_eos_connect.jvm").joinpath(QUIET_LOG4J_FILE)))


def with_java_options(conf: Mapping[str, str], options: str) -> dict[str, str]:
    """`conf` with `options` added to the driver JVM's options (for a JVM this process
    starts)."""
    given = conf.get(DRIVER_JAVA_OPTIONS, "")
    return {**conf, DRIVER_JAVA_OPTIONS: f"{given} {options}".strip()}


def job_log_file(app_name: str, env: Mapping[str, str] | None = None) -> Path:
    """A new log file for a quiet job's Spark log: `<app name>-<time>-<pid>.log` in
    `$EOSCONNECT_LOG_DIR`, else in `eosconnect-logs` under the temp folder (created)."""
    import tempfile
    import time

    environ = os.environ if env is None else env
    folder = Path(environ.get(JOB_LOG_DIR_ENV) or Path(tempfile.gettempdir(), "eosconnect-logs"))
    folder.mkdir(parents=True, exist_ok=True)
    safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in app_name)
    return folder / f"{safe_name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


def with_quiet_logging(conf: Mapping[str, str], log_file: Path) -> dict[str, str]:
    """`conf` with the quiet log4j2 file, writing to `log_file`, added to the driver JVM's
    options."""
    return with_java_options(
        conf,
        f"{LOG4J_CONFIG_FLAG}={quiet_log_config().as_uri()} "
        + shlex.quote(f"-D{JOB_LOG_PROPERTY}={log_file}"),
    )


def quiet_running_jvm(log_file: Path) -> None:
    """Load the quiet log4j2 file, writing to `log_file`, into the running driver JVM
    (spark-submit's: it logged its own start-up before this process ran, and Spark reloads its
    default logging while the SparkContext starts, which `spark.log.level` quiets)."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None
    jvm.java.lang.System.setProperty(JOB_LOG_PROPERTY, str(log_file))
    uri = jvm.java.net.URI(quiet_log_config().as_uri())
    jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(uri)


def use_this_interpreter_for_workers(plan: SessionPlan | None = None) -> None:
    """Make Spark's Python processes run this interpreter, which has the project's packages,
    through `eosconnect-spark-python` (`spark.worker_python`: pyspark imported from the package,
    not its zip copy): always for a local master, and on a cluster unless `$PYSPARK_PYTHON`
    names another interpreter (naming this one, it gets the command beside it: the same
    environment, run through it). The driver side's Python processes (the lookup of Python
    data sources) run `$PYSPARK_DRIVER_PYTHON`, set the same way unless given."""
    from spark_eos_connect.spark.worker_python import names_this_interpreter, worker_python

    given = os.environ.get("PYSPARK_PYTHON")
    if plan is None or plan.local or not given or names_this_interpreter(given):
        os.environ["PYSPARK_PYTHON"] = worker_python()
    if plan is None or not plan.submitted:
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", worker_python())


FIRST_GATEWAY_CALL_IMPORTS = ("pyspark.testing.utils",)
"""Modules pyspark imports on the driver's first Py4J call with arguments, which a session
this process starts makes right after its JVM is up: pyspark's NumPy converter asks
`pyspark.testing.utils` whether NumPy is installed, and that module imports pandas to tell
whether pandas is (0.2-0.3 s on this machine, py-spy over a job started from nothing)."""


def import_in_background(modules: Sequence[str]) -> threading.Thread:
    """Import `modules` on a daemon thread (the driver JVM starts meanwhile, and Python's
    module locks make a later import of the same module wait for this one). pyspark starts
    the JVM with a `preexec_fn` meanwhile; Python takes its import lock around that fork, and
    the function only sets a signal handler in the child."""

    def run() -> None:
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception:  # it is imported again, and fails loudly, where it is needed
                continue

    thread = threading.Thread(target=run, name="eosconnect-imports", daemon=True)
    thread.start()
    return thread


def _get_or_create(conf: Mapping[str, str]) -> Any:
    """`SparkSession.builder` with `conf`, `getOrCreate()`."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def build_session(
    plan: SessionPlan,
    register: bool = True,
    worker_env: Mapping[str, str] | None = None,
    quiet_log: Path | None = None,
) -> Any:
    """The SparkSession `plan` describes, with the `eosconnect` data source registered.

    `worker_env` reaches the data source's Python processes (driver-side readers, executors)
    even when spark-submit started the JVM before this process set it; `quiet_log` quiets
    Spark's logging from the start, into that file (see the module docstring).
    """
    from pyspark.sql import SparkSession

    if plan.reuse:
        spark = SparkSession.builder.getOrCreate()
        for key, value in plan.conf.items():
            if spark.conf.isModifiable(key):
                spark.conf.set(key, value)
    else:
        use_this_interpreter_for_workers(plan)
        conf = plan.conf
        if quiet_log and plan.submitted:
            conf = {**conf, "spark.log.level": "ERROR"}
        elif quiet_log:
            conf = with_quiet_logging(conf, quiet_log)
        if plan.submitted:  # spark-submit started the JVM: the session attaches to it
            spark = _get_or_create(conf)
        else:
            import_in_background(FIRST_GATEWAY_CALL_IMPORTS)
            with class_archive.driver_launch() as archive_options:
                spark = _get_or_create(with_java_options(conf, archive_options))
        if quiet_log and plan.submitted:
            quiet_running_jvm(quiet_log)
        elif not quiet_log:
            spark.sparkContext.setLogLevel("WARN")
    spark.sparkContext.environment.update(worker_env or {})
    if register:
        import spark_eos_connect

        spark_eos_connect.register(spark)
    return spark


def spark_session(
    app_name: str = "spark_eos_connect",
    cores: int = 2,
    extra: Mapping[str, str] | None = None,
    register: bool = True,
    master: str | None = None,
) -> Any:
    """A SparkSession with Delta and `eosconnect`, on the master chosen as described above."""
    return build_session(current_plan(app_name, cores, extra, master), register)


def local_spark_session(
    app_name: str = "spark_eos_connect",
    cores: int = 2,
    extra: Mapping[str, str] | None = None,
    register: bool = True,
    master: str | None = None,
) -> Any:
    """`spark_session`: local unless spark-submit, `master`, `$SPARK_MASTER` or a running
    session say otherwise (the name predates cluster support)."""
    return spark_session(app_name, cores, extra, register, master)
