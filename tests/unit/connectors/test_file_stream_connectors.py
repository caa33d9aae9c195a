"""FileStreamSource/Sink: Connect's options and offset shapes, resume, partial lines, fsync."""

from __future__ import annotations

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
