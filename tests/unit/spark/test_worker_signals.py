"""`spark.worker_signals`: the stream reader process's first SIGTERM ends its wait for the JVM,
and none interrupts a `stop()` that has begun. Each case runs in a child process of its own, as
the handlers are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from spark_eos_connect.spark import worker_signals

    worker_signals.finish_stop_on_sigterm()
    try:
        if sys.argv[1] == "waiting":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            print("wait not ended")
        else:
            worker_signals.stop_has_begun()
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)
            print("stop finished")
    except SystemExit as leaving:
        print(f"wait ended with {leaving.code}")
    """
)


def run_child(case: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, case], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def test_the_first_sigterm_ends_the_wait_for_the_jvm() -> None:
    assert run_child("waiting") == "wait ended with 143"


def test_a_sigterm_after_the_stop_began_is_ignored() -> None:
    assert run_child("stopping") == "stop finished"


def test_both_stream_readers_stop_shielded(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_eos_connect.spark import kafka_stream, source_stream

    calls: list[str] = []
    monkeypatch.setattr(kafka_stream, "stop_has_begun", lambda: calls.append("kafka"))
    monkeypatch.setattr(source_stream, "stop_has_begun", lambda: calls.append("source"))
    kafka_stream.EosConnectKafkaStreamReader(
        {"name": "n", "topics": "t", "kafka.bootstrap.servers": "127.0.0.1:9"}
    ).stop()
    source_stream.EosConnectSourceStreamReader(
        {
            "name": "n",
            "connector.class": "Generator",
            "topic": "t",
            "kafka.bootstrap.servers": "127.0.0.1:9",
        }
    ).stop()

    assert calls == ["kafka", "source"]
