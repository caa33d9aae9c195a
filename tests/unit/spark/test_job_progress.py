"""What a job says while its query runs: why it would do nothing (said again while that
persists) and, on its last line, what it did (issue 40 item 3)."""

from __future__ import annotations

import pytest

from spark_eos_connect.spark import job_support
from spark_eos_connect.spark.job_support import IdleWatch, NoOpWarnings


def test_the_idle_watch_counts_records_and_batches_once_each() -> None:
    watch = IdleWatch()
    ran = {"durationMs": {"addBatch": 3}}
    events = [{"batchId": 0, "numInputRows": 3, **ran}, {"batchId": 1, "numInputRows": 0, **ran}]

    watch.update(events)
    watch.update(events)  # recentProgress repeats what was seen

    assert (watch.records, watch.batches) == (3, 2)


def test_no_op_warnings_are_said_at_once_and_again_while_they_persist(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    now = [100.0]
    monkeypatch.setattr(job_support.time, "monotonic", lambda: now[0])
    found = ['WARNING: topic "x" does not exist']
    warnings = NoOpWarnings(lambda: list(found))

    warnings.say_if_due()
    now[0] += job_support.WARN_EVERY_S / 2
    warnings.say_if_due()  # not yet due
    now[0] += job_support.WARN_EVERY_S
    warnings.say_if_due()
    found.clear()
    now[0] += job_support.WARN_EVERY_S
    warnings.say_if_due()  # resolved: nothing to say

    assert capsys.readouterr().err.splitlines() == ['WARNING: topic "x" does not exist'] * 2
    assert warnings.current == []


def test_jobs_keep_librdkafkas_informational_lines_out_unless_verbose() -> None:
    from spark_eos_connect.spark.job_support import quiet_kafka_logs

    options = {"kafka.bootstrap.servers": "b:9092"}

    assert quiet_kafka_logs(options, verbose=False)["kafka.log_level"] == "3"
    assert "kafka.log_level" not in quiet_kafka_logs(options, verbose=True)
    given = {**options, "kafka.log_level": "7"}
    assert quiet_kafka_logs(given, verbose=False)["kafka.log_level"] == "7"
