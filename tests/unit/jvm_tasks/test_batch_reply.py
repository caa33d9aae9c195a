"""A BATCH reply read as the task host's spec lays it out (TaskHostMain): every optional
column, dropped records, null keys and values; and what the producer is asked per record."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.jvm_tasks.batch_reply import read_batch
from spark_eos_connect.jvm_tasks.converted import DeliveryReceipts
from spark_eos_connect.jvm_tasks.wire import BATCH, FrameReader, FrameWriter


def body(frame: FrameWriter) -> FrameReader:
    return FrameReader(frame.frame()[4:])


def full_batch() -> FrameWriter:
    """Seq 40..42 taken, the middle one dropped: two records, to topics b and a."""
    out = FrameWriter(BATCH).i64(40).i32(3).i32(2)
    out.i32(2).text("b").text("a")  # topics
    out.i32(0).i32(1)  # topic index per record
    out.i32(1 | 2 | 4 | 8)
    out.i32(0).i32(2)  # positions among the taken
    out.i32(-1).i32(3)  # partitions
    out.i64(-1).i64(1_700_000_000_000)  # timestamps
    out.i32(-1).i32(2).raw(b"k2")  # keys: null, "k2"
    out.i32(3).i32(-1).raw(b"v1\x00")  # values: 3 bytes, null
    out.i32(1).text("h").i32(1).raw(b"x")  # headers of record 0: h=x
    out.i32(0)  # record 1: none
    out.i32(2)
    out.text('{"p":1}').text('{"o":7}')
    out.text('{"p":2}').text(None)
    return out


def test_every_column_is_read_as_laid_out() -> None:
    records = read_batch(body(full_batch()), None)

    assert (records.first_seq, records.taken, len(records)) == (40, 3, 3)
    assert records.topics == ["b", "a"]
    assert records.keys == [None, b"k2"] and records.values == [b"v1\x00", None]
    assert records.positions == [0, 2]
    assert records.partitions == [-1, 3] and records.timestamps == [-1, 1_700_000_000_000]
    assert records.headers == [[("h", b"x")], []]
    assert records.offsets == [({"p": 1}, {"o": 7}), ({"p": 2}, None)]
    assert not records.plain


def test_a_plain_batch_has_no_optional_columns() -> None:
    out = FrameWriter(BATCH).i64(0).i32(2).i32(2).i32(1).text("t").i32(0).i32(0).i32(0)
    out.i32(-1).i32(-1).i32(1).i32(2).raw(b"abc").i32(0)
    records = read_batch(body(out), None)
    assert records.plain and records.topics == ["t", "t"]
    assert records.keys == [None, None] and records.values == [b"a", b"bc"]
    assert records.offsets == []


class Message:
    def __init__(self, partition: int, offset: int) -> None:
        self._partition, self._offset = partition, offset

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


def test_producer_arguments_and_receipts_by_sequence_number() -> None:
    receipts = DeliveryReceipts()
    records = read_batch(body(full_batch()), receipts)
    reported: list[Any] = []

    first, second = records.extras(0, lambda e, m: reported.append(m)), records.extras(1, print)
    assert "partition" not in first and "timestamp" not in first  # -1: none
    assert first["headers"] == [("h", b"x")]
    assert second["partition"] == 3 and second["timestamp"] == 1_700_000_000_000
    first["on_delivery"](None, Message(0, 11))
    assert len(reported) == 1  # the task's own bookkeeping is told too
    second["on_delivery"](None, Message(3, 12))

    # seq = first seq + position among the taken: 40 and 42
    assert receipts.take(41) == [(40, 0, 11)]
    assert receipts.take(42) == [(42, 3, 12)] and receipts.take(99) == []


def test_the_schemas_of_handed_over_columns_follow_the_offsets() -> None:
    out = FrameWriter(BATCH).i64(0).i32(1).i32(1).i32(1).text("t").i32(0).i32(16)
    out.i32(-1).i32(5).raw(b"\x00\x00\x00\x001")  # key null; value: schema 0, payload 1
    out.i32(0)  # no offsets
    out.i32(1).i32(0).text('{"type":"int32","optional":false}')
    records = read_batch(body(out), None)
    assert records.values == [b"\x00\x00\x00\x001"]
    assert records.schemas == [(0, '{"type":"int32","optional":false}')]
    assert read_batch(body(full_batch()), None).schemas is None


def test_dropping_records_keeps_every_column_and_the_positions_aligned() -> None:
    receipts = DeliveryReceipts()
    records = read_batch(body(full_batch()), receipts)
    records.without({0})
    assert records.topics == ["a"] and records.keys == [b"k2"] and records.values == [None]
    assert records.positions == [2] and records.partitions == [3] and records.headers == [[]]
    assert records.timestamps == [1_700_000_000_000] and records.taken == 3
    records.extras(0, lambda e, m: None)["on_delivery"](None, Message(3, 12))
    assert receipts.take(99) == [(42, 3, 12)]  # still seq 42


def test_transaction_requests_follow_the_schemas() -> None:
    """Flag 32: bits 0-1 the request on the last taken record, bits 2-3 the poll's."""
    out = FrameWriter(BATCH).i64(5).i32(1).i32(1).i32(1).text("t").i32(0).i32(32)
    out.i32(-1).i32(1).raw(b"v").i32(0).i32(1 | 2 << 2)
    records = read_batch(body(out), None)
    assert (records.on_last, records.after_poll) == ("commit", "abort")
    assert records.values == [b"v"]

    plain = read_batch(body(FrameWriter(BATCH).i64(0).i32(0).i32(0).i32(0).i32(0).i32(0)), None)
    assert (plain.on_last, plain.after_poll) == (None, None)


def test_a_batch_stopping_inside_a_poll_says_so() -> None:
    """Flag 64: the batch's last record is not its poll's last (no extra field)."""
    out = FrameWriter(BATCH).i64(5).i32(1).i32(1).i32(1).text("t").i32(0).i32(64)
    out.i32(-1).i32(1).raw(b"v").i32(0)
    assert not read_batch(body(out), None).ends_poll

    plain = read_batch(body(FrameWriter(BATCH).i64(0).i32(0).i32(0).i32(0).i32(0).i32(0)), None)
    assert plain.ends_poll
