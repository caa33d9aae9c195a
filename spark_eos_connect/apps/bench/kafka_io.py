"""The bench's data: the numbered lines and values it writes, and the read_committed counts
that time (`VisibilityWatch`) and verify (`verify_topic`) every Kafka-bound mode."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.kafka_clients import (
    StableOffsets,
    WholeTopicConsumer,
    produce_spread,
)
from spark_eos_connect.apps.bench.results import Verification

Ident = Callable[[bytes], Hashable]
"""What identifies a record among the ones a mode writes (for the distinct count)."""


def numbered_value(number: int, size: int) -> bytes:
    """`<number>|` padded with `x` to `size` bytes (longer when the number needs it)."""
    head = b"%d|" % number
    return head + b"x" * max(size - len(head), 0)


def value_number(value: bytes) -> Hashable:
    """The number of a `numbered_value`."""
    return value.partition(b"|")[0]


def write_lines(path: Path, count: int, size: int) -> Path:
    """`count` numbered lines of `size` bytes each, newline included."""
    with path.open("wb") as out:
        chunk: list[bytes] = []
        for number in range(count):
            chunk.append(numbered_value(number, size - 1) + b"\n")
            if len(chunk) == 10_000:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk))
    return path


def produce_numbered(
    kafka: Mapping[str, Any], topic: str, count: int, size: int, partitions: int
) -> None:
    """`count` numbered values spread evenly over the topic's partitions (no transaction)."""
    values = (numbered_value(number, size) for number in range(count))
    remaining = produce_spread(kafka, topic, values, partitions)
    if remaining:
        raise RuntimeError(f"{remaining} records of {topic} not delivered")


class CommittedReader:
    """A read_committed consumer of every partition of a topic from the beginning, counting the
    records (and, with `ident`, the distinct ones)."""

    def __init__(
        self, kafka: Mapping[str, Any], topic: str, partitions: int, ident: Ident | None = None
    ) -> None:
        self.consumer = WholeTopicConsumer(
            kafka, topic, partitions, f"eosconnect-bench-count-{uuid.uuid4().hex[:8]}"
        )
        self.ident = ident
        self.count = 0
        self.ids: set[Hashable] = set()
        self.last_offsets: dict[int, int] = {}
        """The offset of the last record read from each partition."""

    def poll_once(self, timeout_s: float = 0.1) -> None:
        """Consume what is there (up to 10,000 records)."""
        for message in self.consumer.consume(10_000, timeout_s):
            if message.error() is not None:
                raise RuntimeError(f"consume failed: {message.error()}")
            self.count += 1
            self.last_offsets[message.partition() or 0] = message.offset() or 0
            if self.ident is not None:
                self.ids.add(self.ident(message.value() or b""))

    def read_to_end(self, timeout_s: float = 600.0) -> None:
        """Consume up to the end each partition has now."""
        marks = self.consumer.watermarks(60)
        ends = {p: high for p, (low, high) in marks.items() if high > low}
        deadline = time.monotonic() + timeout_s
        while True:
            behind = self.consumer.behind(ends)
            if not behind:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading to the end timed out; behind on {behind}")
            self.poll_once()

    def close(self) -> None:
        """Leave."""
        self.consumer.close()


LSO_SAMPLE_INTERVAL_S = 0.02
"""How often `VisibilityWatch` asks for the last stable offsets: its time resolution."""

Sample = tuple[float, dict[int, int]]
"""(`time.monotonic()` when the answer arrived, last stable offset of each partition)."""


def first_visible(samples: list[Sample], last_offsets: Mapping[int, int]) -> float | None:
    """When every partition's last stable offset had passed its last record: the first
    sample that says so (the earliest time known to be at or after the moment), else None."""
    for at, stable in samples:
        if all(stable.get(p, 0) > offset for p, offset in last_offsets.items()):
            return at
    return None


class StableOffsetSampler:
    """Samples a topic's last stable offsets (what read_committed consumers may read up to)
    every `LSO_SAMPLE_INTERVAL_S`, keeping the samples in which they moved."""

    def __init__(self, kafka: Mapping[str, Any], topic: str, partitions: int) -> None:
        self.offsets = StableOffsets(kafka, topic, partitions)
        self.samples: list[Sample] = []
        self._lock = threading.Lock()

    def sample(self) -> None:
        """Ask once; keep the answer if it differs from the previous one."""
        stable = self.offsets.ask(10)
        at = time.monotonic()
        with self._lock:
            if not self.samples or self.samples[-1][1] != stable:
                self.samples.append((at, stable))

    def snapshot(self) -> list[Sample]:
        with self._lock:
            return list(self.samples)


class VisibilityWatch:
    """Tells when `expected` records of a topic became visible to read_committed consumers
    (`wait()`, a `time.monotonic()`), so a mode is timed from its start to then.

    A counting consumer says when they are all there, and which offset holds each partition's
    last record; the moment they became visible is when the partitions' last stable offsets
    passed those records, from samples taken meanwhile. So the time does not include the
    counting consumer catching up after a large transaction's commit (it read 550,000 records
    for 3 s after the last one on this machine)."""

    def __init__(
        self, kafka: Mapping[str, Any], topic: str, partitions: int, expected: int
    ) -> None:
        self.reader = CommittedReader(kafka, topic, partitions)
        self.sampler = StableOffsetSampler(kafka, topic, partitions)
        self.expected = expected
        self.reached_at: float | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"bench-watch-{topic}", daemon=True)
        self._sampling = threading.Thread(
            target=self._sample, name=f"bench-lso-{topic}", daemon=True
        )

    def __enter__(self) -> VisibilityWatch:
        self.reader.poll_once(0.5)  # joined and fetching before the mode starts
        self._sampling.start()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)
        self._sampling.join(1)  # a daemon; an unanswered request may hold it a while
        self.reader.close()

    def _sample(self) -> None:
        try:
            while not self._stop.is_set():
                self.sampler.sample()
                self._stop.wait(LSO_SAMPLE_INTERVAL_S)
        except BaseException as error:  # reported by wait()
            self.error = error
            self._stop.set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.reader.count < self.expected:
                self.reader.poll_once()
            while not self._stop.is_set() and self.reader.count >= self.expected:
                self.reached_at = first_visible(self.sampler.snapshot(), self.reader.last_offsets)
                if self.reached_at is not None:
                    return
                self._stop.wait(LSO_SAMPLE_INTERVAL_S)
        except BaseException as error:  # reported by wait()
            self.error = error

    def wait(self, timeout_s: float, alive: Callable[[], None] = lambda: None) -> float:
        """The time every expected record was visible. `alive` is called every half second
        and raises when whatever writes the records has died; a time-out raises too."""
        deadline = time.monotonic() + timeout_s
        while self._thread.is_alive() and time.monotonic() < deadline:
            alive()
            self._thread.join(0.5)
        if self.error is not None:
            raise RuntimeError(f"counting failed: {self.error!r}") from self.error
        if self.reached_at is None:
            raise TimeoutError(
                f"{self.reader.count:,} of {self.expected:,} records visible after {timeout_s:.0f}s"
            )
        return self.reached_at


def verify_topic(
    kafka: Mapping[str, Any],
    topic: str,
    partitions: int,
    work: str,
    mode: str,
    expected: int,
    ident: Ident,
) -> Verification:
    """Count `topic`'s committed records and the distinct ones among them."""
    reader = CommittedReader(kafka, topic, partitions, ident)
    try:
        reader.read_to_end()
    finally:
        reader.close()
    return Verification(work, mode, expected, reader.count, len(reader.ids))


FILE_SAMPLE_INTERVAL_S = 0.02
"""How often `LineWatch` reads what was appended to a sink's file: its time resolution."""


class LineWatch:
    """Tells when a file that sinks append to holds `expected` lines (`wait()`, a
    `time.monotonic()`): a thread reads whatever was appended every `FILE_SAMPLE_INTERVAL_S`
    and counts the newlines."""

    def __init__(self, path: Path, expected: int) -> None:
        self.path = path
        self.expected = expected
        self.lines = 0
        self.reached_at: float | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"bench-lines-{path.name}")

    def __enter__(self) -> LineWatch:
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        try:
            with self.path.open("rb") as data:
                while not self._stop.is_set():
                    chunk = data.read(64 * 1024 * 1024)
                    self.lines += chunk.count(b"\n")
                    if self.lines >= self.expected:
                        self.reached_at = time.monotonic()
                        return
                    if not chunk:
                        self._stop.wait(FILE_SAMPLE_INTERVAL_S)
        except BaseException as error:  # reported by wait()
            self.error = error

    def wait(self, timeout_s: float, alive: Callable[[], None] = lambda: None) -> float:
        """The time the file held every expected line; `alive` is called every half second
        and raises when the writer died; a time-out raises too."""
        deadline = time.monotonic() + timeout_s
        while self._thread.is_alive() and time.monotonic() < deadline:
            alive()
            self._thread.join(0.5)
        if self.error is not None:
            raise RuntimeError(f"counting lines failed: {self.error!r}") from self.error
        if self.reached_at is None:
            raise TimeoutError(
                f"{self.lines:,} of {self.expected:,} lines in {self.path} after {timeout_s:.0f}s"
            )
        return self.reached_at


def count_numbered_lines(lines: Iterable[bytes]) -> tuple[int, int]:
    """(lines, distinct numbers) of lines holding `numbered_value`s; a line that is not one
    (a torn or mixed line) counts as a line but adds no number."""
    seen: set[bytes] = set()
    count = 0
    for line in lines:
        count += 1
        number, bar, _ = line.partition(b"|")
        if bar and number.isdigit():
            seen.add(number)
    return count, len(seen)


def verify_file(path: Path, work: str, mode: str, expected: int) -> Verification:
    """Count the lines of a sink's file and the distinct records among them."""
    with path.open("rb") as data:
        found, distinct = count_numbered_lines(data)
    return Verification(work, mode, expected, found, distinct, where="file lines")
