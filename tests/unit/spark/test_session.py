"""Which master, configuration and logging a job's session gets (spark/session.py, pure
functions)."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.spark.job_support import embedded_broker_warning
from spark_eos_connect.spark.session import (
    DELTA_SESSION_CONF,
    FIRST_GATEWAY_CALL_IMPORTS,
    JOB_LOG_DIR_ENV,
    JOB_LOG_PROPERTY,
    LOG4J_CONFIG_FLAG,
    SessionPlan,
    choose_master,
    has_delta_jar,
    import_in_background,
    is_local_master,
    job_log_file,
    plan_session,
    submit_args_master,
    wants_quiet_logs,
    with_quiet_logging,
)

DELTA = "/jars/delta-spark_2.13-4.4.0.jar"


def jars() -> list[str]:
    return [DELTA, "/jars/delta-storage-4.4.0.jar"]


def no_jars() -> list[str]:
    raise AssertionError("the jars were not needed")


@pytest.mark.parametrize(
    ("master", "local"),
    [
        ("local", True),
        ("local[2]", True),
        ("local[*]", True),
        ("local[2,4]", True),
        ("local-cluster[2,1,1024]", False),
        ("spark://127.0.0.1:7077", False),
        ("yarn", False),
    ],
)
def test_local_masters_are_one_jvm(master: str, local: bool) -> None:
    assert is_local_master(master) is local


def test_nothing_set_falls_back_to_a_local_master_with_local_tuning() -> None:
    plan = plan_session("app", cores=3, env={}, delta_jars=jars)

    assert (plan.master, plan.origin, plan.local) == ("local[3,4]", "local default", True)
    assert plan.conf["spark.master"] == "local[3,4]"
    assert plan.conf["spark.ui.enabled"] == "false"
    assert plan.conf["spark.sql.shuffle.partitions"] == "3"
    assert plan.conf["spark.sql.streaming.checkpointFileManagerClass"].endswith(
        ".FileSystemBasedCheckpointFileManager"
    )
    assert plan.conf["spark.hadoop.fs.file.impl"] == "org.apache.hadoop.fs.RawLocalFileSystem"
    assert plan.conf["spark.jars"] == ",".join(jars())
    assert plan.conf.items() >= DELTA_SESSION_CONF.items()
    assert "spark.jars.packages" not in plan.conf  # never Ivy


@pytest.mark.parametrize("master", [None, "spark://127.0.0.1:7077"])
def test_python_workers_get_unmeasured_arrow_batches_over_a_unix_socket(master: str | None) -> None:
    plan = plan_session("app", master=master, env={}, delta_jars=jars)

    # Spark skips measuring the batch after each row only at exactly Int.MaxValue
    assert plan.conf["spark.sql.execution.arrow.maxBytesPerBatch"] == str(2**31 - 1)
    assert plan.conf["spark.python.unix.domain.socket.enabled"] == "true"  # no Nagle delays


def test_spark_submit_master_and_settings_win_and_are_not_overridden() -> None:
    submitted = {
        "spark.master": "spark://127.0.0.1:7077",
        "spark.jars": DELTA,
        "spark.app.name": "mine",
        "spark.sql.shuffle.partitions": "8",
    }
    plan = plan_session(
        "app", submitted=submitted, env={"SPARK_MASTER": "local[1]"}, delta_jars=no_jars
    )

    assert (plan.master, plan.origin, plan.local) == (
        "spark://127.0.0.1:7077",
        "spark-submit",
        False,
    )
    assert plan.submitted
    for key in submitted:  # already in the JVM's configuration: left as spark-submit set them
        assert key not in plan.conf
    assert "spark.ui.enabled" not in plan.conf and "spark.driver.memory" not in plan.conf
    assert plan.conf.items() >= DELTA_SESSION_CONF.items()


def test_spark_submit_default_local_master_is_kept_as_given() -> None:
    plan = plan_session("app", submitted={"spark.master": "local[*]"}, env={}, delta_jars=no_jars)

    assert (plan.master, plan.origin) == ("local[*]", "spark-submit")
    assert "spark.master" not in plan.conf
    assert plan.conf["spark.ui.enabled"] == "false"  # local tuning still applies


def test_spark_submit_without_delta_jars_turns_delta_off_with_a_note() -> None:
    plan = plan_session("app", submitted={"spark.master": "local[*]"}, env={}, delta_jars=no_jars)

    assert "spark.jars" not in plan.conf
    assert "spark.sql.extensions" not in plan.conf
    assert len(plan.notes) == 1 and "--jars" in plan.notes[0]


def test_a_master_conflicting_with_spark_submit_is_refused() -> None:
    with pytest.raises(ConfigError, match="give the master to spark-submit"):
        plan_session(
            "app",
            master="local[1]",
            submitted={"spark.master": "spark://h:7077"},
            env={},
            delta_jars=no_jars,
        )
    same = plan_session(
        "app", master="spark://h:7077", submitted={"spark.master": "spark://h:7077"}, env={}
    )
    assert same.origin == "spark-submit"


def test_job_master_beats_conf_and_environment() -> None:
    env = {"SPARK_MASTER": "spark://env:7077", "PYSPARK_SUBMIT_ARGS": "--master yarn pyspark-shell"}

    plan = plan_session("app", master="spark://flag:7077", env=env, delta_jars=jars)

    assert (plan.master, plan.origin) == ("spark://flag:7077", "--master")
    assert plan.conf["spark.master"] == "spark://flag:7077"
    assert "spark.ui.enabled" not in plan.conf  # no single-machine tuning on a cluster
    assert plan.conf["spark.jars"] == ",".join(jars())  # shipped by the driver to executors


def test_conf_master_is_a_request_and_two_different_ones_are_refused() -> None:
    plan = plan_session("app", extra={"spark.master": "local[1]"}, env={}, delta_jars=jars)
    assert (plan.master, plan.origin, plan.conf["spark.master"]) == (
        "local[1]",
        "--conf",
        "local[1]",
    )

    with pytest.raises(ConfigError, match="two masters"):
        choose_master("local[1]", "local[2]", None, {})


def test_submit_args_then_environment() -> None:
    args_env = {"PYSPARK_SUBMIT_ARGS": "--master local-cluster[2,1,1024] pyspark-shell"}
    assert choose_master(None, None, None, {**args_env, "SPARK_MASTER": "x"}) == (
        "local-cluster[2,1,1024]",
        "$PYSPARK_SUBMIT_ARGS",
        False,  # pyspark passes it to spark-submit itself
    )
    assert choose_master(None, None, None, {"SPARK_MASTER": "spark://e:1"}) == (
        "spark://e:1",
        "$SPARK_MASTER",
        True,
    )


@pytest.mark.parametrize(
    ("args", "master"),
    [
        ("--master spark://h:1 pyspark-shell", "spark://h:1"),
        ("--conf a=b --master=local[3] pyspark-shell", "local[3]"),
        ("pyspark-shell", None),
        (None, None),
    ],
)
def test_submit_args_master(args: str | None, master: str | None) -> None:
    assert submit_args_master(args) == master


def test_a_running_session_is_reused_and_a_master_request_noted() -> None:
    plan = plan_session(
        "app",
        master="local[1]",
        extra={"spark.sql.shuffle.partitions": "4"},
        active_master="spark://databricks:7077",
        env={},
        delta_jars=no_jars,
    )

    assert plan.reuse and (plan.master, plan.local) == ("spark://databricks:7077", False)
    assert plan.conf == {"spark.sql.shuffle.partitions": "4"}
    assert "--master ignored" in plan.notes[0]


def test_user_jars_are_kept_next_to_delta_and_extra_conf_wins() -> None:
    plan = plan_session(
        "app",
        extra={"spark.jars": "/x/mine.jar", "spark.ui.enabled": "true"},
        env={},
        delta_jars=jars,
    )

    assert plan.conf["spark.jars"] == ",".join(["/x/mine.jar", *jars()])
    assert plan.conf["spark.ui.enabled"] == "true"
    assert has_delta_jar(plan.conf["spark.jars"]) and not has_delta_jar("/x/mine.jar")


def test_the_embedded_broker_warns_on_a_cluster_only() -> None:
    local = plan_session("app", env={}, delta_jars=jars)
    cluster = plan_session("app", master="spark://127.0.0.1:7077", env={}, delta_jars=jars)

    assert embedded_broker_warning(local) is None
    warning = embedded_broker_warning(cluster)
    assert warning is not None and "--bootstrap-servers" in warning
    assert "spark://127.0.0.1:7077" in warning


def test_jobs_are_quiet_unless_verbose() -> None:
    plan = SessionPlan("local[2,4]", "local default", {"spark.app.name": "job"})

    assert wants_quiet_logs(plan, verbose=False, submitted={})
    assert not wants_quiet_logs(plan, verbose=True, submitted={})


def test_a_running_session_keeps_its_logging() -> None:
    plan = SessionPlan("local[2]", "the running session", {}, reuse=True)

    assert not wants_quiet_logs(plan, verbose=False, submitted={})


@pytest.mark.parametrize("where", ["conf", "spark-submit"])
def test_a_users_log4j_file_keeps_spark_logging(where: str) -> None:
    options = {"spark.driver.extraJavaOptions": f"-Xss4m {LOG4J_CONFIG_FLAG}=file:/etc/l.xml"}
    conf, submitted = (options, {}) if where == "conf" else ({}, options)
    plan = SessionPlan("spark://h:7077", "spark-submit", conf, submitted=where != "conf")

    assert not wants_quiet_logs(plan, verbose=False, submitted=submitted)


@pytest.mark.parametrize("where", ["conf", "spark-submit"])
def test_a_users_log_level_keeps_spark_logging(where: str) -> None:
    level = {"spark.log.level": "INFO"}
    conf, submitted = (level, {}) if where == "conf" else ({}, level)
    plan = SessionPlan("local[2]", "spark-submit", conf, submitted=where != "conf")

    assert not wants_quiet_logs(plan, verbose=False, submitted=submitted)


def test_quiet_logging_joins_the_drivers_java_options(tmp_path: Path) -> None:
    log = tmp_path / "a folder" / "job.log"
    conf = with_quiet_logging(
        {"spark.driver.extraJavaOptions": "-Xss4m", "spark.app.name": "j"}, log
    )

    options = shlex.split(conf["spark.driver.extraJavaOptions"])
    assert options[0] == "-Xss4m"
    flag, uri = options[1].split("=", 1)
    assert flag == LOG4J_CONFIG_FLAG
    assert uri.startswith("file:/") and uri.endswith("/jvm/log4j2-spark.properties")
    assert options[2] == f"-D{JOB_LOG_PROPERTY}={log}"
    assert conf["spark.app.name"] == "j"


def test_a_job_log_is_a_new_file_named_for_the_app(tmp_path: Path) -> None:
    log = job_log_file("source_to_kafka-orders/cdc", env={JOB_LOG_DIR_ENV: str(tmp_path / "logs")})

    assert log.parent == tmp_path / "logs" and log.parent.is_dir()
    assert log.name.startswith("source_to_kafka-orders_cdc-") and log.suffix == ".log"
    assert not log.exists()


def test_a_job_without_delta_gets_no_delta_jars_unless_it_gives_them() -> None:
    plain = plan_session("app", env={}, delta_jars=no_jars, delta=False)
    assert "spark.jars" not in plain.conf and "spark.sql.extensions" not in plain.conf

    mine = plan_session(
        "app", extra={"spark.jars": "/x/mine.jar"}, env={}, delta_jars=no_jars, delta=False
    )
    assert mine.conf["spark.jars"] == "/x/mine.jar" and "spark.sql.extensions" not in mine.conf

    given = plan_session("app", extra={"spark.jars": ",".join(jars())}, env={}, delta=False)
    assert given.conf["spark.sql.extensions"] == DELTA_SESSION_CONF["spark.sql.extensions"]

    submitted = plan_session("app", submitted={"spark.master": "local[*]"}, env={}, delta=False)
    assert submitted.notes == () and "spark.sql.extensions" not in submitted.conf


def test_import_in_background_imports_the_modules_on_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"eosconnect_prefetched_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        thread = import_in_background(["eosconnect_no_such_module", name])
        thread.join(30)

        assert not thread.is_alive()
        assert "eosconnect_no_such_module" not in sys.modules
        assert sys.modules[name].THREAD == "eosconnect-imports"
    finally:
        sys.modules.pop(name, None)


def test_the_first_gateway_calls_imports_exist() -> None:
    """The names must stay right across pyspark versions (a wrong one would be skipped)."""
    for module in FIRST_GATEWAY_CALL_IMPORTS:
        assert importlib.util.find_spec(module) is not None, module
