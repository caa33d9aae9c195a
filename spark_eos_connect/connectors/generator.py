"""A deterministic, seedable and fast source connector for demos, tests and benchmarks.

Each of the `tasks.max` tasks emits an independent stream. Record `n` of task `t` is a pure
function of (`seed`, `t`, `n`, `key.space`, `value.size`): its key is `k<i>` with `i` in
`[0, key.space)` and its value is `g:<t>:<n>:` followed by `value.size` bytes of padding
(`parse_generated_value` reads `(t, n)` back). Source partition `{"generator": <id>, "task": t}`,
offset `{"position": n + 1}` (records already emitted), so resuming reproduces the same records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from itertools import repeat
from typing import Any, Final

import numpy as np

from spark_eos_connect.api.config import ConfigDef, ConfigType, NonEmptyString, Range
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from spark_eos_connect.errors import ConfigError, EosConnectError

__all__ = [
    "GeneratorSourceConnector",
    "GeneratorSourceTask",
    "expected_records",
    "generated_key",
    "generated_value",
    "parse_generated_value",
]

TOPIC_CONFIG: Final = "topic"
SEED_CONFIG: Final = "seed"
KEY_SPACE_CONFIG: Final = "key.space"
RECORDS_PER_POLL_CONFIG: Final = "records.per.poll"
VALUE_SIZE_CONFIG: Final = "value.size"
MAX_RECORDS_CONFIG: Final = "max.records"
RATE_CONFIG: Final = "rate"
GENERATOR_ID_CONFIG: Final = "generator.id"
TASK_CONFIG: Final = "generator.task"
COMMIT_EVERY_CONFIG: Final = "transaction.commit.every"

GENERATOR_FIELD: Final = "generator"
TASK_FIELD: Final = "task"
POSITION_FIELD: Final = "position"

MAX_SLEEP_SECONDS: Final = 0.1
"""A rate-limited poll never sleeps longer than this."""

CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The topic to write generated records to.",
    )
    .define(
        SEED_CONFIG,
        ConfigType.LONG,
        42,
        importance="medium",
        doc="Seed of the key sequence and padding; the same seed gives the same records.",
    )
    .define(
        KEY_SPACE_CONFIG,
        ConfigType.LONG,
        1000,
        Range.at_least(1),
        importance="medium",
        doc="Number of distinct keys (`k0` ... `k<key.space - 1>`).",
    )
    .define(
        RECORDS_PER_POLL_CONFIG,
        ConfigType.INT,
        10000,
        Range.at_least(1),
        importance="low",
        doc="The most records one poll returns.",
    )
    .define(
        VALUE_SIZE_CONFIG,
        ConfigType.INT,
        100,
        Range.at_least(0),
        importance="low",
        doc="Bytes of padding appended to each value after its `g:<task>:<n>:` header.",
    )
    .define(
        MAX_RECORDS_CONFIG,
        ConfigType.LONG,
        -1,
        Range.at_least(-1),
        importance="medium",
        doc="Records per task after which poll returns None; -1 for no limit.",
    )
    .define(
        RATE_CONFIG,
        ConfigType.DOUBLE,
        0.0,
        Range.at_least(0),
        importance="medium",
        doc="Records per second per task; 0 for no limit.",
    )
    .define(
        GENERATOR_ID_CONFIG,
        ConfigType.STRING,
        "",
        importance="low",
        doc="The `generator` value of the source partitions; defaults to the connector name "
        "(or `seed-<seed>` when there is none).",
    )
    .define(
        COMMIT_EVERY_CONFIG,
        ConfigType.LONG,
        0,
        Range.at_least(0),
        importance="low",
        doc="With `transaction.boundary=connector`, commit after every this many records "
        "(position a multiple of it); 0 to never ask.",
    )
)

_MASK64: Final = (1 << 64) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15
_MIX: Final = 0xBF58476D1CE4E5B9
_KEY_TABLE_LIMIT: Final = 1 << 16  # key spaces up to this size get their key strings cached
_PAD_ALPHABET: Final = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _stream_base(seed: int, task: int) -> int:
    """A 64-bit starting point per (seed, task), well mixed so streams differ."""
    z = (seed * _GOLDEN + (task + 1) * _MIX) & _MASK64
    z = ((z ^ (z >> 30)) * _MIX) & _MASK64
    return (z ^ (z >> 31)) & _MASK64


def _padding(seed: int, size: int) -> bytes:
    start = seed % len(_PAD_ALPHABET)
    rotated = _PAD_ALPHABET[start:] + _PAD_ALPHABET[:start]
    return (rotated * (size // len(rotated) + 1))[:size]


def _key_indexes(base: int, start: int, count: int, key_space: int) -> list[int]:
    """`generated_key`'s key numbers for records `start .. start+count-1`, all at once.

    numpy's uint64 arithmetic wraps modulo 2**64, which is the masking `generated_key` does.
    """
    numbers = np.arange(count, dtype=np.uint64)
    numbers += np.uint64((base + start) & _MASK64)
    numbers *= np.uint64(_GOLDEN)
    numbers >>= np.uint64(32)
    numbers %= np.uint64(key_space)
    indexes: list[int] = numbers.tolist()
    return indexes


def generated_key(seed: int, task: int, n: int, key_space: int = 1000) -> str:
    """The key of record `n` of `task` (Fibonacci hashing of the record number)."""
    base = _stream_base(seed, task)
    return f"k{((((base + n) * _GOLDEN) & _MASK64) >> 32) % key_space}"


def generated_value(seed: int, task: int, n: int, value_size: int = 100) -> bytes:
    """The value of record `n` of `task`: `g:<task>:<n>:` plus `value_size` padding bytes."""
    return b"g:%d:%d:" % (task, n) + _padding(seed, value_size)


def parse_generated_value(value: bytes | str) -> tuple[int, int]:
    """`(task, n)` from a generated value; raises ValueError for anything else."""
    raw = value.encode() if isinstance(value, str) else bytes(value)
    parts = raw.split(b":", 3)
    if len(parts) < 4 or parts[0] != b"g":
        raise ValueError(f"not a generated value: {raw[:40]!r}")
    return int(parts[1]), int(parts[2])


def expected_records(
    seed: int, task: int, start: int, count: int, key_space: int = 1000, value_size: int = 100
) -> list[tuple[str, bytes]]:
    """`(key, value)` of records `start .. start+count-1` of `task`, as the task emits them."""
    return [
        (generated_key(seed, task, n, key_space), generated_value(seed, task, n, value_size))
        for n in range(start, start + count)
    ]


def _generator_id(config: dict[str, Any], connector_name: str) -> str:
    return config[GENERATOR_ID_CONFIG] or connector_name or f"seed-{config[SEED_CONFIG]}"


class GeneratorSourceConnector(SourceConnector):
    """Splits generation into `tasks.max` independent task streams."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def config_def(self) -> ConfigDef:
        """The generator's options."""
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options and keep them for the tasks."""
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_class(self) -> type[GeneratorSourceTask]:
        """`GeneratorSourceTask`."""
        return GeneratorSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """`max_tasks` configurations, task t with `generator.task=t` and a fixed generator id."""
        config = CONFIG_DEF.parse(self._props)
        generator_id = _generator_id(config, self._props.get("name", ""))
        return [
            {**self._props, GENERATOR_ID_CONFIG: generator_id, TASK_CONFIG: str(t)}
            for t in range(max_tasks)
        ]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        """SUPPORTED: records are a pure function of their position."""
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """SUPPORTED (see `transaction.commit.every`)."""
        return ConnectorTransactionBoundaries.SUPPORTED

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Accept resets and `{"position": int >= 0}` for `{"generator": str, "task": int >= 0}`."""
        for partition, offset in offsets:
            if offset is None:
                continue
            generator = partition.get(GENERATOR_FIELD) if partition else None
            task = partition.get(TASK_FIELD) if partition else None
            if not isinstance(generator, str) or not _is_count(task):
                raise ConfigError(
                    f"Generator partitions look like {{'{GENERATOR_FIELD}': <id>, "
                    f"'{TASK_FIELD}': <int >= 0>}}, not {partition!r}"
                )
            if set(offset) != {POSITION_FIELD} or not _is_count(offset[POSITION_FIELD]):
                raise ConfigError(
                    f"Generator offsets look like {{'{POSITION_FIELD}': <int >= 0>}}, "
                    f"not {offset!r}"
                )
        return True


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class GeneratorSourceTask(SourceTask):
    """Emits records `position, position + 1, ...` of its stream; see the module docstring."""

    clock: Callable[[], float] = staticmethod(time.monotonic)
    """Time source for rate limiting (replaceable in tests)."""
    sleep: Callable[[float], None] = staticmethod(time.sleep)
    """Sleep function for rate limiting (replaceable in tests)."""

    def __init__(self) -> None:
        self._topic = ""
        self._seed = 0
        self._task = 0
        self._key_space = 1
        self._per_poll = 1
        self._value_template = b""
        self._key_table: list[str] | None = None
        self._max_records = -1
        self._rate = 0.0
        self._commit_every = 0
        self._partition: dict[str, Any] = {}
        self._base = 0
        self.position = 0
        """Number of records of this stream emitted so far (the next record's number)."""
        self._rate_start_time = 0.0
        self._rate_start_position = 0
        self._stopped = False

    def start(self, props: dict[str, str]) -> None:
        """Read the options and resume from the stored offset of this task's partition."""
        config = CONFIG_DEF.parse(props)
        context = self.context
        task_text = props.get(TASK_CONFIG)
        try:
            self._task = int(task_text) if task_text is not None else context.task_id
        except ValueError:
            raise ConfigError(f"{TASK_CONFIG} must be an integer, not {task_text!r}") from None
        self._topic = config[TOPIC_CONFIG]
        self._seed = config[SEED_CONFIG]
        self._key_space = config[KEY_SPACE_CONFIG]
        self._per_poll = config[RECORDS_PER_POLL_CONFIG]
        padding = _padding(self._seed, config[VALUE_SIZE_CONFIG])
        self._max_records = config[MAX_RECORDS_CONFIG]
        self._rate = config[RATE_CONFIG]
        self._commit_every = config[COMMIT_EVERY_CONFIG]
        self._base = _stream_base(self._seed, self._task)
        # `template % n` is the value of record n: one formatting operation per record.
        self._value_template = b"g:%d:%%d:" % self._task + padding.replace(b"%", b"%%")
        self._key_table = (
            [f"k{i}" for i in range(self._key_space)]
            if self._key_space <= _KEY_TABLE_LIMIT
            else None
        )
        self._partition = {
            GENERATOR_FIELD: _generator_id(config, context.connector_name),
            TASK_FIELD: self._task,
        }
        stored = context.offset_storage_reader.offset(self._partition)
        position = 0 if stored is None else stored.get(POSITION_FIELD, 0)
        if not _is_count(position):
            raise EosConnectError(
                f"Stored generator offset {stored!r} for {self._partition!r} is not "
                f"{{'{POSITION_FIELD}': <int >= 0>}}"
            )
        self.position = position
        self._rate_start_time = self.clock()
        self._rate_start_position = position
        self._stopped = False

    @property
    def source_partition(self) -> dict[str, Any]:
        """This task's source partition (a copy)."""
        return dict(self._partition)

    def _allowed(self) -> int:
        """Records the rate allows since the rate window started (float noise tolerated)."""
        return int((self.clock() - self._rate_start_time) * self._rate + 1e-6)

    def _due(self) -> int:
        """How many records the rate allows now, sleeping (<= 100 ms) if none is due yet."""
        if self._rate <= 0:
            return self._per_poll
        emitted = self.position - self._rate_start_position
        due = self._allowed() - emitted
        if due <= 0:
            wait = (emitted + 1) / self._rate - (self.clock() - self._rate_start_time)
            self.sleep(min(MAX_SLEEP_SECONDS, max(wait, 0.0)))
            due = self._allowed() - emitted
        if due > self._per_poll:
            # Do not bank an unbounded burst: forget the time the caller left us idle.
            self._rate_start_time = self.clock() - (emitted + self._per_poll) / self._rate
            due = self._per_poll
        return max(due, 0)

    def _keys(self, start: int, stop: int) -> list[str]:
        """The keys of records `start .. stop-1`, as `generated_key` computes them."""
        indexes = _key_indexes(self._base, start, stop - start, self._key_space)
        table = self._key_table
        if table is not None:
            return list(map(table.__getitem__, indexes))
        return list(map("k%d".__mod__, indexes))

    def poll(self) -> list[SourceRecord] | None:
        """The next records (at most `records.per.poll`); None once `max.records` are out."""
        if self._stopped:
            return None
        start = self.position
        count = self._per_poll if self._rate <= 0 else self._due()
        if self._max_records >= 0:
            remaining = self._max_records - start
            if remaining <= 0:
                return None
            count = min(count, remaining)
        if count <= 0:
            return []
        stop = start + count
        records = list(
            map(
                SourceRecord,
                repeat(self._partition),  # one partition dict shared by the batch
                [{POSITION_FIELD: n} for n in range(start + 1, stop + 1)],
                repeat(self._topic),
                map(self._value_template.__mod__, range(start, stop)),
                self._keys(start, stop),
            )
        )
        self.position = start + count
        self._request_boundaries(records, start)
        return records

    def _request_boundaries(self, records: list[SourceRecord], start: int) -> None:
        every = self._commit_every
        context = self.context.transaction_context
        if every <= 0 or context is None:
            return
        first = (start // every + 1) * every - 1  # first n in the batch with (n + 1) % every == 0
        for n in range(first, start + len(records), every):
            context.commit_transaction(records[n - start])

    def stop(self) -> None:
        """Stop emitting."""
        self._stopped = True
