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
