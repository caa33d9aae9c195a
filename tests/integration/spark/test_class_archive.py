"""`make setup` trains the driver JVM's class archive, and a session the project starts maps it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from spark_eos_connect.spark.class_archive import archive_file

pytestmark = pytest.mark.integration

SESSION = textwrap.dedent(
    """
    from spark_eos_connect.spark.session import build_session, plan_session
    extra = {"spark.driver.extraJavaOptions": "-Xshare:on"}
    spark = build_session(plan_session("archive-test", extra=extra, env={}, delta=False))
    print("rows", spark.range(3).count())
    spark.stop()
    """
)


def test_setup_made_the_archive_for_this_jdk_and_spark() -> None:
    assert archive_file().is_file(), "no class archive: run `make setup`"


def test_a_session_maps_the_archive() -> None:
    """With `-Xshare:on` the JVM refuses to start unless it maps the archive it is given."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", SESSION],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "rows 3" in done.stdout
