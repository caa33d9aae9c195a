"""The bench's sink, noop and first-record modes: their pure parts (options, counting lines,
medians, ratios, the table's rows)."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_eos_connect.apps.bench.chart import bar_value
from spark_eos_connect.apps.bench.config import (
    CONNECT_FIRST,
    EOSCONNECT_READER,
    FIRST_RECORD,
    JOB_FROM_NOTHING,
    READER,
    SINK,
    SPARK_KAFKA,
    BenchConfig,
    connect_sink,
    eosconnect_sink,
)
from spark_eos_connect.apps.bench.connect_peer import file_sink_config
from spark_eos_connect.apps.bench.first_record import first_record_result, job_command, job_env
from spark_eos_connect.apps.bench.kafka_delta import Round, alternating_rounds
from spark_eos_connect.apps.bench.kafka_io import (
    LineWatch,
    count_numbered_lines,
    numbered_value,
    verify_file,
)
from spark_eos_connect.apps.bench.report import format_table, table_rows
from spark_eos_connect.apps.bench.results import ModeResult
from spark_eos_connect.apps.bench.sink import rows_read, sink_options


def lines_of(numbers: list[int]) -> bytes:
    return b"".join(numbered_value(n, 20) + b"\n" for n in numbers)


def test_counting_lines_tells_duplicates_and_torn_lines(tmp_path: Path) -> None:
    assert count_numbered_lines(lines_of([0, 1, 2]).splitlines()) == (3, 3)
    assert count_numbered_lines(lines_of([0, 1, 1]).splitlines()) == (3, 2)
    assert count_numbered_lines([b"12|xx", b"xx3|x", b"|x"]) == (3, 1)
    path = tmp_path / "out.txt"
    path.write_bytes(lines_of(list(range(5))))
    assert verify_file(path, SINK, "m", 5).ok
    path.write_bytes(lines_of([0, 1, 2, 3, 3]))
    verification = verify_file(path, SINK, "m", 5)
    assert (verification.ok, verification.found, verification.distinct) == (False, 5, 4)


def test_line_watch_sees_lines_appended_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "sink.txt"
    data = lines_of(list(range(1000)))

    def append() -> None:
        with path.open("ab") as out:
            for start in range(0, len(data), 777):  # pieces that end mid-line
                out.write(data[start : start + 777])
                out.flush()

    with LineWatch(path, 1000) as watch:
        writer = threading.Thread(target=append)
        writer.start()
        reached = watch.wait(30)
        writer.join()
    assert watch.lines == 1000 and reached > 0


def test_sinks_are_compared_with_connect_at_the_same_task_count() -> None:
    results = [
        ModeResult(SINK, connect_sink(1), 100, 1.0),
        ModeResult(SINK, connect_sink(2), 100, 0.5),
        ModeResult(SINK, eosconnect_sink(1), 100, 2.0),
        ModeResult(SINK, eosconnect_sink(2), 100, 2.0),
        ModeResult(READER, SPARK_KAFKA, 100, 1.0),
        ModeResult(READER, EOSCONNECT_READER, 100, 4.0),
    ]
    ratios = {(r.result.mode, r.peer): r.ratio_to_peer for r in table_rows(results)}
    assert ratios[(eosconnect_sink(1), connect_sink(1))] == 0.5
    assert ratios[(eosconnect_sink(2), connect_sink(2))] == 0.25
    assert ratios[(EOSCONNECT_READER, SPARK_KAFKA)] == 0.25
    assert connect_sink(2) == "Kafka Connect sink worker, 2 tasks"


def test_first_record_rows_are_times_and_their_ratio_is_the_peers_time_over_theirs() -> None:
    job = first_record_result(JOB_FROM_NOTHING, [12.0, 6.0, 7.0], "from the job's start")
    connect = first_record_result(CONNECT_FIRST, [1.5], "from the PUT", "worker: 9.0s")
    assert job.seconds == 7.0 and job.records == 1 and job.work == FIRST_RECORD
    assert "12.0s, 6.0s, 7.0s" in job.timing and "worker: 9.0s" in connect.timing
    [first, second] = table_rows([connect, job])
    assert first.ratio_to_peer is None
    assert second.timed and second.ratio_to_peer is not None
    assert round(second.ratio_to_peer, 3) == round(1.5 / 7.0, 3)
    assert second.as_dict()["records_per_s"] is None
    assert "|       n/a |" in format_table([second])  # records/s
    assert bar_value(second) == (7.0, "7.0 s")


def test_job_command_is_the_readme_job_against_the_given_broker(tmp_path: Path) -> None:
    command = job_command("n", tmp_path / "lines", "t", "127.0.0.1:9", tmp_path / "ck", 10_000)
    assert command[1].endswith("jobs/source_to_kafka.py")
    pairs = dict(zip(command[2::2], command[3::2], strict=False))
    assert pairs["--bootstrap-servers"] == "127.0.0.1:9"
    assert pairs["--connector-class"] == "FileStreamSource"
    assert "--until-idle" not in command
    env = job_env({"PATH": "/bin", "EOSCONNECT_DRAIN_FILE": "/tmp/d", "PYSPARK_GATEWAY_PORT": "1"})
    assert env == {"PATH": "/bin"}


def test_both_sinks_get_the_same_file_topic_and_tasks(tmp_path: Path) -> None:
    connect = file_sink_config("t", tmp_path / "o", 2)
    ours = sink_options(BenchConfig(), "n", "t", "b:1", tmp_path / "o", 2)
    for key in ("topics", "file", "tasks.max"):
        assert connect[key] == ours[key]
    assert ours["maxRecordsPerTrigger"] == str(BenchConfig().sink_per_trigger)


def test_alternating_rounds_warm_each_mode_up_then_alternate(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []

    def run(mode: str, index: int) -> Round:
        calls.append((mode, index))
        return Round(mode, index, float(len(calls)), ((10, 0.1),), tmp_path)

    warmups, rounds = alternating_rounds(["a", "b"], 2, run, lambda line: None)
    assert calls == [("a", -1), ("b", -1), ("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    assert warmups["a"].seconds == 1.0 and [r.seconds for r in rounds["b"]] == [4.0, 6.0]
    assert rows_read(READER, "a", 10, rounds["a"][0]).ok
    assert not rows_read(READER, "a", 11, rounds["a"][0]).ok
