"""FileStreamSource/Sink: Connect's options and offset shapes, resume, partial lines, fsync."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api import (
    ExactlyOnceSupport,
    InMemoryOffsetStorageReader,
    SinkRecord,
    SinkTaskContext,
    SourceRecord,
    SourceTaskContext,
    TopicPartition,
)
from spark_eos_connect.connectors.file_stream import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from spark_eos_connect.errors import ConfigError, EosConnectError


def source_task(
    path: Path,
    reader: InMemoryOffsetStorageReader | None = None,
    extra: dict[str, str] | None = None,
) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    props = {"file": str(path), "topic": "lines", **(extra or {})}
    task.initialize(SourceTaskContext(props, reader or InMemoryOffsetStorageReader()))
    task.start(props)
    return task


def poll_all(task: FileStreamSourceTask) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    while batch := task.poll():
        out.extend(batch)
    return out


def values_and_positions(records: list[SourceRecord]) -> list[tuple[Any, Any]]:
    return [(r.value, r.source_offset["position"] if r.source_offset else None) for r in records]


def test_emits_lines_with_connect_partition_and_byte_offsets(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("a\nbé\n\nlast\n".encode())
    records = poll_all(source_task(path))
    assert values_and_positions(records) == [("a", 2), ("bé", 6), ("", 7), ("last", 12)]
    for record in records:
        assert record.source_partition == {"filename": str(path)}
        assert record.topic == "lines"
        assert record.key is None
        assert isinstance(record.timestamp, int)


def test_returns_none_when_no_data_and_picks_up_appends(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"")
    task = source_task(path)
    assert task.poll() is None
    with path.open("ab") as f:
        f.write(b"one\ntw")
    assert values_and_positions(task.poll() or []) == [("one", 4)]
    assert task.poll() is None  # "tw" has no newline yet: not emitted
    with path.open("ab") as f:
        f.write(b"o\n")
    assert values_and_positions(task.poll() or []) == [("two", 8)]
    task.stop()


def test_missing_file_returns_none_until_created(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = source_task(path)
    assert task.poll() is None
    path.write_bytes(b"x\n")
    assert values_and_positions(task.poll() or []) == [("x", 2)]


def test_resumes_from_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"l0\nl1\nl2\nl3\n")
    first = poll_all(source_task(path))
    for index, record in enumerate(first):
        assert record.source_partition is not None and record.source_offset is not None
        reader = InMemoryOffsetStorageReader([(record.source_partition, record.source_offset)])
        resumed = poll_all(source_task(path, reader))
        assert [r.value for r in resumed] == [r.value for r in first[index + 1 :]]
        assert [r.source_offset for r in resumed] == [r.source_offset for r in first[index + 1 :]]


def test_reset_offset_starts_from_beginning(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\n")
    reader = InMemoryOffsetStorageReader([({"filename": str(path)}, None)])
    assert [r.value for r in poll_all(source_task(path, reader))] == ["a", "b"]


@pytest.mark.parametrize("bad", [{"position": "3"}, {"position": -1}, {"position": True}])
def test_bad_stored_offset_fails(tmp_path: Path, bad: dict[str, Any]) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\n")
    reader = InMemoryOffsetStorageReader([({"filename": str(path)}, bad)])
    with pytest.raises(EosConnectError, match="position"):
        source_task(path, reader).poll()


def test_batch_size_limits_each_poll(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"".join(b"%d\n" % i for i in range(10)))
    task = source_task(path, extra={"batch.size": "4"})
    sizes = []
    while batch := task.poll():
        sizes.append(len(batch))
    assert sizes == [4, 4, 2]


def test_crlf_and_lone_cr_end_lines_and_trailing_cr_waits(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\rc\r")
    task = source_task(path)
    assert values_and_positions(task.poll() or []) == [("a", 3), ("b", 5)]
    with path.open("ab") as f:
        f.write(b"\nd\n")
    assert values_and_positions(task.poll() or []) == [("c", 8), ("d", 10)]


def test_large_file_across_read_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    lines = [("x" * (i % 300)) + str(i) for i in range(5000)]
    path.write_text("".join(line + "\n" for line in lines))
    records = poll_all(source_task(path))
    assert [r.value for r in records] == lines
    assert records[-1].source_offset == {"position": path.stat().st_size}


_LINE_END = re.compile(rb"\r\n|\r|\n")


def expected_lines(data: bytes, start: int = 0) -> list[tuple[str, int]]:
    """Connect's lines of `data` from byte `start`: (value, position after the line end).

    A line ends at LF, CR LF or a lone CR; a CR as the last byte is not a line end yet.
    """
    out: list[tuple[str, int]] = []
    begin = start
    for match in _LINE_END.finditer(data, start):
        if match.group() == b"\r" and match.end() == len(data):
            break
        out.append((data[begin : match.start()].decode("utf-8", "replace"), match.end()))
        begin = match.end()
    return out


def test_every_record_has_the_position_after_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    data = b"".join(
        b"line %d %s%s" % (i, "é€😀".encode() * (i % 4), (b"\n", b"\r\n", b"\r")[i % 3])
        for i in range(3000)
    )
    path.write_bytes(data + b"tail without end")
    records = poll_all(source_task(path, extra={"batch.size": "128"}))
    assert values_and_positions(records) == expected_lines(data + b"tail without end")
    assert len(records) == 3000
    assert records[-1].source_offset == {"position": len(data)}


def test_invalid_utf8_is_replaced_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    data = b"ok\n\xff\xfe\n\xc3\n\xe2\x82\r\nabc\xe2\x82\xacdef\n\xf0\x9f\x98\rz\n"
    path.write_bytes(data)
    records = poll_all(source_task(path))
    assert values_and_positions(records) == expected_lines(data)
    assert [r.value for r in records][1:4] == ["\ufffd\ufffd", "\ufffd", "\ufffd"]


def test_lines_spanning_large_reads_and_a_huge_line(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    rng = random.Random(7)
    pieces = [b"%d:" % i + "ü".encode() * rng.randrange(0, 400) for i in range(20000)]
    pieces.insert(5000, b"h" * (3 * 1024 * 1024))  # longer than any sensible read size
    data = b"".join(piece + (b"\r\n" if i % 2 else b"\n") for i, piece in enumerate(pieces))
    path.write_bytes(data)
    records = poll_all(source_task(path, extra={"batch.size": "5000"}))
    assert values_and_positions(records) == expected_lines(data)


def test_file_growing_in_random_pieces_between_polls(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"")
    rng = random.Random(3)
    data = b"".join(
        "é".encode() * rng.randrange(0, 3) + b"x" * rng.randrange(0, 60) + rng.choice(ENDS)
        for _ in range(4000)
    )
    task = source_task(path, extra={"batch.size": "37"})
    records: list[SourceRecord] = []
    written = 0
    while written < len(data):
        step = rng.choice([1, 2, 5, 100, 4096, 70000])
        with path.open("ab") as f:
            f.write(data[written : written + step])
        written += step
        for _ in range(rng.randrange(0, 3)):
            batch = task.poll()
            assert batch is None or 1 <= len(batch) <= 37
            records.extend(batch or [])
    records.extend(poll_all(task))
    task.stop()
    assert values_and_positions(records) == expected_lines(data)


ENDS = [b"\n", b"\r\n", b"\r", b"\n\r", b"\r\r\n"]


def test_polls_are_full_batches_while_lines_are_available(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"".join(b"%06d\n" % i for i in range(25000)))
    for batch_size in (1, 999, 7000, 25000, 100000):
        task = source_task(path, extra={"batch.size": str(batch_size)})
        sizes = []
        while batch := task.poll():
            sizes.append(len(batch))
        full, rest = divmod(25000, batch_size)
        assert sizes == [batch_size] * full + ([rest] if rest else [])
        task.stop()


def test_records_of_one_poll_share_one_partition(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nc\n")
    batch = source_task(path).poll() or []
    assert len(batch) == 3
    assert len({id(r.source_partition) for r in batch}) == 1
    assert batch[0].source_partition == {"filename": str(path)}
    assert len({r.timestamp for r in batch}) == 1


def test_resumes_mid_file_at_any_line_across_reads(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    data = b"".join(
        b"%d " % i + b"y" * (i % 250) + (b"\r\n" if i % 5 else b"\r") for i in range(12000)
    )
    path.write_bytes(data)
    lines = expected_lines(data)
    rng = random.Random(11)
    for _, position in [lines[0], lines[-2], *rng.sample(lines, 5)]:
        reader = InMemoryOffsetStorageReader([({"filename": str(path)}, {"position": position})])
        resumed = poll_all(source_task(path, reader, {"batch.size": "3000"}))
        assert values_and_positions(resumed) == expected_lines(data, position)


def test_resume_between_cr_and_lf_gives_an_empty_line(tmp_path: Path) -> None:
    # As in Connect, an offset that points after a CR whose LF follows reads that LF as a line end.
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\n")
    reader = InMemoryOffsetStorageReader([({"filename": str(path)}, {"position": 2})])
    assert values_and_positions(poll_all(source_task(path, reader))) == [("", 3), ("b", 5)]


def test_trailing_cr_waits_then_lone_cr_ends_the_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\r")
    task = source_task(path)
    assert values_and_positions(task.poll() or []) == [("a", 2)]
    assert task.poll() is None
    with path.open("ab") as f:
        f.write(b"b")
    assert values_and_positions(task.poll() or []) == [("", 3)]
    with path.open("ab") as f:
        f.write(b"\r")
    assert task.poll() is None
    with path.open("ab") as f:
        f.write(b"\n")
    assert values_and_positions(task.poll() or []) == [("b", 6)]


def test_stop_then_poll_reopens_at_the_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"".join(b"%d\n" % i for i in range(100)))
    reader = InMemoryOffsetStorageReader()
    task = source_task(path, reader, {"batch.size": "10"})
    first = task.poll() or []
    task.stop()
    assert first[-1].source_partition is not None
    reader.set(first[-1].source_partition, first[-1].source_offset)
    rest = poll_all(task)
    assert [r.value for r in first + rest] == [str(i) for i in range(100)]


def test_source_connector_options_and_single_task() -> None:
    connector = FileStreamSourceConnector()
    assert set(connector.config_def().names()) == {"file", "topic", "batch.size"}
    assert connector.config_def().keys["batch.size"].default == 2000
    props = {"file": "/tmp/x", "topic": "t", "name": "c", "tasks.max": "4"}
    connector.start(props)
    assert connector.task_configs(4) == [props]
    assert connector.task_class() is FileStreamSourceTask
    assert connector.exactly_once_support(props) is ExactlyOnceSupport.SUPPORTED


def test_source_connector_requires_file_and_topic() -> None:
    with pytest.raises(ConfigError) as caught:
        FileStreamSourceConnector().start({})
    assert "file" in str(caught.value) and "topic" in str(caught.value)


CONFIG = {"file": "/data/in.txt", "topic": "t"}


@pytest.mark.parametrize(
    "offsets",
    [
        [],
        [({"filename": "/data/in.txt"}, {"position": 0})],
        [({"filename": "/data/in.txt"}, {"position": 10**12})],
        [({"filename": "/data/older.txt"}, {"position": 5})],
        [({"anything": "goes"}, None)],
    ],
)
def test_alter_offsets_accepts_connect_shapes(offsets: list[Any]) -> None:
    assert FileStreamSourceConnector().alter_offsets(CONFIG, offsets) is True


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ([({"filename": "/data/in.txt"}, {"pos": 1})], "contain the key 'position'"),
        ([({"filename": "/data/in.txt"}, {"position": "1"})], "must be an integer"),
        ([({"filename": "/data/in.txt"}, {"position": 1.0})], "must be an integer"),
        ([({"filename": "/data/in.txt"}, {"position": True})], "must be an integer"),
        ([({"filename": "/data/in.txt"}, {"position": -1})], "non-negative"),
        ([({"file": "/data/in.txt"}, {"position": 1})], "contain the key 'filename'"),
        ([(None, {"position": 1})], "cannot be null"),
    ],
)
def test_alter_offsets_rejects_malformed(offsets: list[Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FileStreamSourceConnector().alter_offsets(CONFIG, offsets)


def test_alter_offsets_requires_a_file_config() -> None:
    with pytest.raises(ConfigError, match="file"):
        FileStreamSourceConnector().alter_offsets({"topic": "t"}, [])


def sink_task(path: Path | None) -> FileStreamSinkTask:
    props = {"topics": "t"} if path is None else {"file": str(path), "topics": "t"}
    task = FileStreamSinkTask()
    task.initialize(SinkTaskContext(props))
    task.start(props)
    return task


def test_sink_writes_text_values_and_mixed_values_alike(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = sink_task(path)
    task.put([SinkRecord("t", 0, 0, None, "a"), SinkRecord("t", 0, 1, None, "")])
    task.put([SinkRecord("t", 0, 2, None, "b"), SinkRecord("t", 0, 3, None, b"c")])
    task.stop()
    assert path.read_text(encoding="utf-8") == "a\n\nb\nc\n"


def test_sink_appends_one_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("existing\n")
    task = sink_task(path)
    task.put(
        [
            SinkRecord("t", 0, 0, None, "text"),
            SinkRecord("t", 0, 1, None, "é".encode()),
            SinkRecord("t", 0, 2, None, 42),
            SinkRecord("t", 0, 3, None, None),
        ]
    )
    task.put([])
    offsets = {TopicPartition("t", 0): 4}
    assert task.pre_commit(offsets) is offsets
    assert path.read_text(encoding="utf-8") == "existing\ntext\né\n42\nnull\n"
    task.stop()


def test_sink_flush_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr("os.fsync", synced.append)
    task = sink_task(tmp_path / "out.txt")
    task.put([SinkRecord("t", 0, 0, None, "a")])
    task.flush({})
    assert len(synced) == 1
    task.stop()


def test_sink_without_file_writes_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    task = sink_task(None)
    task.put([SinkRecord("t", 0, 0, None, "hello")])
    task.flush({})
    task.stop()
    assert capsys.readouterr().out == "hello\n"


def test_sink_not_started_fails() -> None:
    with pytest.raises(EosConnectError, match="not started"):
        FileStreamSinkTask().put([SinkRecord("t", 0, 0, None, "a")])


def test_sink_connector_options_tasks_and_alter_offsets() -> None:
    connector = FileStreamSinkConnector()
    assert set(connector.config_def().names()) == {"file", "topics"}
    props = {"file": "/tmp/o", "topics": "a,b"}
    connector.start(props)
    assert connector.task_configs(3) == [props, props, props]
    assert connector.task_class() is FileStreamSinkTask
    assert connector.alter_offsets(props, {TopicPartition("a", 0): 5}) is True
    with pytest.raises(ConfigError, match="topics"):
        FileStreamSinkConnector().start({"file": "/tmp/o"})
