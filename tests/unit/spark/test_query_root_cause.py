"""A failed job names the root cause of its query's failure, not Spark's wrappers."""

from __future__ import annotations

from spark_eos_connect.spark.root_cause import root_cause

FAILED = """[STREAM_FAILED] Query [id = 26, runId = 02] terminated with exception: \
[PYTHON_STREAMING_DATA_SOURCE_RUNTIME_ERROR] Failed when Python streaming data source perform \
latestOffset: Traceback (most recent call last):
  File "/work/spark_eos_connect/source/coordinator.py", line 136, in __init__
    verify_credentials(kafka, CREDENTIALS_TIMEOUT_S)
spark_eos_connect.kafka.security.KafkaAuthenticationError: Kafka refused user 'admin' \
(SCRAM-SHA-512 over SASL_SSL): SASL authentication error
 SQLSTATE: 38000
\tat org.apache.spark.sql.execution.python.PythonException.apply(PythonException.scala:1)
org.apache.spark.SparkException: Job aborted due to stage failure"""


def test_the_last_python_error_is_the_root_cause() -> None:
    assert root_cause(FAILED) == (
        "KafkaAuthenticationError: Kafka refused user 'admin' (SCRAM-SHA-512 over SASL_SSL): "
        "SASL authentication error"
    )


def test_a_jvm_error_alone_is_named() -> None:
    text = "oops\norg.apache.spark.SparkException: Job aborted\n\tat x.y(Z.scala:1)"

    assert root_cause(text) == "SparkException: Job aborted"


def test_text_without_an_error_line_is_kept_whole() -> None:
    assert root_cause("the query was stopped") == "the query was stopped"


def test_a_py4j_wrapper_gives_way_to_the_jvm_error_and_its_deepest_cause() -> None:
    text = (
        "py4j.protocol.Py4JJavaError: An error occurred while calling o152.save.\n"
        ": org.apache.spark.sql.delta.DeltaIOException: [DELTA_CANNOT_CREATE_LOG_PATH] Cannot "
        "create file:/x/_delta_log\n"
        "\tat org.apache.spark.sql.delta.DeltaErrors(DeltaErrors.scala:1)\n"
        "Caused by: org.apache.hadoop.fs.ParentNotDirectoryException: Parent path is not a "
        "directory: file:/x\n"
        "\tat org.apache.hadoop.fs.Foo(Foo.java:1)\n"
        "Caused by: py4j.Py4JException: An exception was raised by the Python Proxy. Return\n"
    )

    assert root_cause(text) == (
        "DeltaIOException: [DELTA_CANNOT_CREATE_LOG_PATH] Cannot create file:/x/_delta_log "
        "(caused by ParentNotDirectoryException: Parent path is not a directory: file:/x)"
    )


def test_python_causes_are_walked_to_the_deepest() -> None:
    from spark_eos_connect.spark.root_cause import root_cause_of

    try:
        try:
            raise PermissionError("cannot write /data/table")
        except PermissionError as cause:
            raise RuntimeError("Job aborted due to stage failure") from cause
    except RuntimeError as error:
        assert root_cause_of(error) == "PermissionError: cannot write /data/table"
