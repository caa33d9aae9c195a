"""The test run's Spark JVM options: set once, a run's own choice kept."""

from __future__ import annotations

import shlex

from spark_eos_connect.testing.fast_jvm import (
    FAST_START_JVM,
    SUBMIT_OPTS_ENV,
    fast_submit_opts,
    use_fast_start_jvms,
)


def test_the_options_split_into_the_drivers_flags_and_the_executors_property() -> None:
    words = shlex.split(fast_submit_opts())  # Spark's launcher splits as a shell does

    assert words == [*FAST_START_JVM.split(), f"-Dspark.executor.extraJavaOptions={FAST_START_JVM}"]


def test_a_run_that_set_its_own_options_keeps_them() -> None:
    env = {SUBMIT_OPTS_ENV: "-Xmx3g"}
    use_fast_start_jvms(env)
    unset: dict[str, str] = {}
    use_fast_start_jvms(unset)

    assert env == {SUBMIT_OPTS_ENV: "-Xmx3g"}
    assert unset == {SUBMIT_OPTS_ENV: fast_submit_opts()}
