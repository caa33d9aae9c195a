"""Java options for the Spark JVMs a test run starts: short runs that are all start-up.

A test's Spark job lives for seconds, and most of its driver JVM's CPU time is the C2
just-in-time compiler and G1's threads working on code that will not run long enough to pay
back (a source job's session and first batches here: 24-30 s of JVM CPU by default, 16 s with
these options). On CI's two cores that CPU is taken from the test running beside it.
`SPARK_SUBMIT_OPTS` reaches every driver JVM spark-submit starts (pyspark's sessions, jobs and
`spark-submit` itself); the `spark.executor.extraJavaOptions` system property it carries
reaches the executors of a standalone cluster, unless a job sets its own.
"""

from __future__ import annotations

from collections.abc import MutableMapping

FAST_START_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""C1 only, one-threaded GC."""
SUBMIT_OPTS_ENV = "SPARK_SUBMIT_OPTS"


def fast_submit_opts() -> str:
    """`SPARK_SUBMIT_OPTS` for the driver and (as a system property) the executors; Spark's
    launcher splits it as a shell would, double quotes keeping the property's value whole."""
    return f'{FAST_START_JVM} "-Dspark.executor.extraJavaOptions={FAST_START_JVM}"'


def use_fast_start_jvms(env: MutableMapping[str, str]) -> None:
    """Set `SPARK_SUBMIT_OPTS` in `env` unless it is set already (a run that chose its own)."""
    env.setdefault(SUBMIT_OPTS_ENV, fast_submit_opts())
