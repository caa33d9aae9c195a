"""The offsets-record header that lets a re-run of a micro-batch emit what an earlier attempt
committed: attempt digests, the run encoding of committed rows, and finding an attempt's rows."""

from __future__ import annotations

import zlib

import pyarrow as pa
import pytest

from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.source import replay
from spark_eos_connect.source.records import committed_rows
from spark_eos_connect.source.replay import (
    ROWS_HEADER,
    attempt_digest,
    committed_by,
    decode_rows_header,
    encode_rows_header,
)
from spark_eos_connect.testing import example_plan as plan

PARTITION = {"filename": "/data/in.txt"}


def offsets_record(*headers: tuple[str, bytes | None]) -> ConsumedRecord:
    return ConsumedRecord("offsets", 0, 7, b"key", b"value", tuple(headers), 0)


def test_every_attempt_of_a_micro_batch_shares_a_digest_and_nothing_else_does() -> None:
    planned = plan([(PARTITION, {"position": 4})])
    again = plan([(dict(PARTITION), {"position": 4})])

    assert attempt_digest(planned, 3) == attempt_digest(again, 3)
    assert attempt_digest(planned, 3) != attempt_digest(planned, 4)
    assert attempt_digest(planned, 3) != attempt_digest(plan([(PARTITION, {"position": 5})]), 3)
    assert attempt_digest(planned, 3) != attempt_digest(
        plan([(PARTITION, {"position": 4})], offsets_positions={3: 18}), 3
    )
    assert attempt_digest(planned, 3) != attempt_digest(
        plan([(PARTITION, {"position": 4})], generation_commit_offset=9), 3
    )
    assert attempt_digest(planned, 3) != attempt_digest(
        plan([(PARTITION, {"position": 4})], transactional_id="eosconnect-c-1"), 3
    )


def test_committed_rows_survive_the_header_in_their_order() -> None:
    rows = committed_rows(
        ["a", "a", "b", "a", "a", "a", "b", "b"],
        [0, 0, 1, 0, 1, 1, 1, 1],
        [10, 11, 5, 12, 3, 4, 6, 9],
    )

    attempt, decoded = decode_rows_header(encode_rows_header("d1", rows))

    assert attempt == "d1"
    assert decoded is not None and decoded.equals(rows)


def test_consecutive_offsets_of_a_partition_fold_into_one_run() -> None:
    n = 100_000
    rows = committed_rows(["t"] * n + ["u"] * n, [0] * n + [2] * n, [*range(n), *range(5, n + 5)])
    payload = zlib.decompress(encode_rows_header("d", rows))

    assert b'"runs":[[0,0,0,100000],[1,2,5,100000]]' in payload


def test_an_empty_transaction_still_names_its_attempt() -> None:
    attempt, decoded = decode_rows_header(encode_rows_header("d", committed_rows([], [], [])))

    assert attempt == "d"
    assert decoded is not None and decoded.num_rows == 0


def test_rows_too_fragmented_for_a_header_are_left_out_but_the_attempt_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replay, "MAX_HEADER_BYTES", 64)
    rows = committed_rows(["t"] * 50, [0] * 50, list(range(0, 100, 2)))

    attempt, decoded = decode_rows_header(encode_rows_header("d", rows))

    assert (attempt, decoded) == ("d", None)


def test_only_the_transactions_of_the_asked_attempt_are_found() -> None:
    first = committed_rows(["t", "t"], [0, 0], [1, 2])
    second = committed_rows(["t"], [1], [8])
    other = committed_rows(["t"], [0], [3])
    records = [
        offsets_record((ROWS_HEADER, encode_rows_header("mine", first))),
        offsets_record(),  # another offsets record of the transaction
        offsets_record(("other", b"x"), (ROWS_HEADER, encode_rows_header("theirs", other))),
        offsets_record((ROWS_HEADER, encode_rows_header("mine", second))),
        offsets_record((ROWS_HEADER, encode_rows_header("mine", committed_rows([], [], [])))),
    ]

    found = committed_by("mine", records)

    assert found is not None
    assert found.transactions == 3 and found.unrecorded == 0
    assert pa.Table.from_batches(found.rows).to_pydict() == {
        "topic": ["t", "t", "t"],
        "partition": [0, 0, 1],
        "offset": [1, 2, 8],
    }
    assert committed_by("nobody", records) is None


def test_a_header_of_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version 2"):
        decode_rows_header(zlib.compress(b'{"v":2,"attempt":"d","topics":[],"runs":[]}'))
