"""The file connectors, with Kafka Connect's FileStream options and offset shapes.

`FileStreamSource` reads lines appended to a file: source partition `{"filename": <file>}`, offset
`{"position": <byte position after the line>}`, so a Connect worker could take over its offsets
(positions match Connect's for ASCII text). `FileStreamSink` appends one line per record.
Connectors run on the driver, tasks on executors.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Sequence, Sized
from itertools import accumulate, repeat
from operator import add
from typing import IO, Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    NonEmptyList,
    NonEmptyString,
    Range,
)
from spark_eos_connect.api.data import Schema
from spark_eos_connect.api.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
    record_field,
)
from spark_eos_connect.api.source import (
    ExactlyOnceSupport,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from spark_eos_connect.errors import ConfigError, EosConnectError

__all__ = [
    "FILENAME_FIELD",
    "POSITION_FIELD",
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]

log = logging.getLogger(__name__)

FILE_CONFIG: Final = "file"
TOPIC_CONFIG: Final = "topic"
TOPICS_CONFIG: Final = "topics"
BATCH_SIZE_CONFIG: Final = "batch.size"
DEFAULT_BATCH_SIZE: Final = 2000

FILENAME_FIELD: Final = "filename"
"""Key of the source partition: the file name as configured."""
POSITION_FIELD: Final = "position"
"""Key of the source offset: the byte position just after the last emitted line."""

SOURCE_CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The file to read lines from (standard input is not supported).",
    )
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="The topic to write the lines to.",
    )
    .define(
        BATCH_SIZE_CONFIG,
        ConfigType.INT,
        DEFAULT_BATCH_SIZE,
        Range.at_least(1),
        importance="low",
        doc="The most lines one poll of the task returns.",
    )
)

SINK_CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        ConfigType.STRING,
        None,
        importance="high",
        doc="The file to append records to; standard output when not set.",
    )
    .define(
        TOPICS_CONFIG,
        ConfigType.LIST,
        validator=NonEmptyList(),
        importance="high",
        doc="The topics to read records from.",
    )
)

_READ_SIZE: Final = 64 * 1024
"""Bytes read from the file at a time. Measured: 1 MiB blocks poll a third slower, as buffers
above the C allocator's mmap threshold (128 KiB) are mapped and page-faulted afresh each time."""


def _split_lines(block: bytes, base: int) -> tuple[list[str], list[int]]:
    """The lines of `block`, which ends with a line end, and the file position after each.

    A line ends at LF, CR LF or a lone CR, as in Connect's FileStreamSourceTask: exactly the line
    ends of `bytes.splitlines`. `base` is the file position of `block[0]`. Lines are decoded as
    UTF-8 with replacement characters; decoding the whole block gives the same text as decoding
    line by line, because line ends are ASCII and never inside a multi-byte sequence.
    """
    sizes: Iterable[int]
    if b"\r" in block:
        values = list(map(bytes.decode, block.splitlines(), repeat("utf-8"), repeat("replace")))
        sizes = map(len, block.splitlines(keepends=True))
    else:
        text = block.decode("utf-8", "replace")
        values = text.split("\n")
        values.pop()  # the empty string after the final \n
        # ASCII text has one byte per character; other text is measured on the raw lines.
        raw: Iterable[Sized] = values if text.isascii() else block.split(b"\n")
        sizes = map(add, map(len, raw), repeat(1, len(values)))
    ends = list(accumulate(sizes, initial=base))
    del ends[0]
    return values, ends


class FileStreamSourceConnector(SourceConnector):
    """Reads one file with one task; exactly-once as long as the file is only appended to."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def config_def(self) -> ConfigDef:
        """`file`, `topic`, `batch.size`."""
        return SOURCE_CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options and keep them for the task."""
        SOURCE_CONFIG_DEF.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_class(self) -> type[FileStreamSourceTask]:
        """`FileStreamSourceTask`."""
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Always one task: a file is one stream."""
        return [dict(self._props)]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        """SUPPORTED: the file is always named, so positions are tracked."""
        return ExactlyOnceSupport.SUPPORTED

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Accept resets of anything, and offsets `{"position": int >= 0}` for `{"filename": ..}`.

        As in Connect, partitions for other file names (from earlier configurations) are allowed;
        the task checks the position against the file when it starts.
        """
        SOURCE_CONFIG_DEF.parse(config)
        for partition, offset in offsets:
            if offset is None:
                continue  # resets are always allowed, to let users clean up stray offsets
            if POSITION_FIELD not in offset:
                raise ConfigError(
                    f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
                )
            position = offset[POSITION_FIELD]
            if isinstance(position, bool) or not isinstance(position, int):
                raise ConfigError(
                    f"The value for the '{POSITION_FIELD}' key in the offset must be an integer, "
                    f"not {position!r}"
                )
            if position < 0:
                raise ConfigError(
                    f"The value for the '{POSITION_FIELD}' key in the offset must be "
                    f"non-negative, not {position}"
                )
            if partition is None:
                raise ConfigError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConfigError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


class FileStreamSourceTask(SourceTask):
    """Emits each complete line of the file as a str value (schema STRING, as Connect's task
    declares), resuming from the stored position.

    The file is read in blocks; the complete lines of a block are decoded and split at once
    and handed out `batch.size` at a time, and a partial last line waits for the next read.
    """

    def __init__(self) -> None:
        self._filename = ""
        self._topic = ""
        self._batch_size = DEFAULT_BATCH_SIZE
        self._stream: IO[bytes] | None = None
        self._buffer = bytearray()  # bytes read but not yet split: at most a partial line
        self._buffer_position = 0  # file position of _buffer[0]
        self._values: list[str] = []  # lines split but not yet emitted, from _values[_next]
        self._ends: list[int] = []  # file position after each line of _values
        self._next = 0
        self._warned_missing = False

    def start(self, props: dict[str, str]) -> None:
        """Read the options; the file is opened on the first poll."""
        config = SOURCE_CONFIG_DEF.parse(props)
        self._filename = config[FILE_CONFIG]
        self._topic = config[TOPIC_CONFIG]
        self._batch_size = config[BATCH_SIZE_CONFIG]

    def _stored_position(self) -> int:
        offset = self.context.offset_storage_reader.offset({FILENAME_FIELD: self._filename})
        recorded = None if offset is None else offset.get(POSITION_FIELD)
        if recorded is None:
            return 0
        if isinstance(recorded, bool) or not isinstance(recorded, int) or recorded < 0:
            raise EosConnectError(
                f"Stored offset for {self._filename}: '{POSITION_FIELD}' must be an integer >= 0, "
                f"not {recorded!r}"
            )
        return recorded

    def _open(self) -> bool:
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115 - kept across polls
        except FileNotFoundError:
            if not self._warned_missing:
                log.warning("File %s does not exist yet; waiting for it", self._filename)
                self._warned_missing = True
            return False
        try:
            position = self._stored_position()
            stream.seek(position)
        except BaseException:
            stream.close()
            raise
        log.debug("Reading %s from byte %d", self._filename, position)
        self._stream = stream
        self._buffer = bytearray()
        self._buffer_position = position
        self._values, self._ends, self._next = [], [], 0
        return True

    def poll(self) -> list[SourceRecord] | None:
        """Up to `batch.size` complete lines; None when there is no new complete line."""
        if self._stream is None and not self._open():
            return None
        timestamp = time.time_ns() // 1_000_000
        first = self._next
        wanted = self._batch_size
        while len(self._values) - first < wanted and self._read_lines():
            first = self._next
        last = min(first + wanted, len(self._values))
        if first == last:
            return None
        values = self._values[first:last]
        ends = self._ends[first:last]
        self._next = last
        # The records of one poll share their partition dict (Connect's is immutable too).
        partition = {FILENAME_FIELD: self._filename}
        return list(
            map(
                SourceRecord,
                repeat(partition),
                [{POSITION_FIELD: end} for end in ends],
                repeat(self._topic),
                values,
                repeat(None),
                repeat(None),
                repeat(()),
                repeat(timestamp),
                repeat(None),
                repeat(Schema.STRING),  # Connect's task declares a string value schema too
            )
        )

    def _read_lines(self) -> bool:
        """Read one block and split its complete lines off; False at the end of the file."""
        assert self._stream is not None
        chunk = self._stream.read(_READ_SIZE)
        if not chunk:
            return False
        buffer = self._buffer
        searched = max(len(buffer) - 1, 0)  # earlier bytes hold no line end but a trailing CR
        buffer += chunk
        # Split after the last line end; a CR as the very last byte may be the first half of
        # CR LF, so its line waits for the next byte, as in Connect.
        end = len(buffer) - 1 if buffer[-1] == 0x0D else len(buffer)
        last_cr = buffer.rfind(b"\r", searched, end)
        cut = max(buffer.rfind(b"\n", searched), last_cr) + 1
        if cut == 0:
            return True
        block = bytes(buffer[:cut])
        del buffer[:cut]
        values, ends = _split_lines(block, self._buffer_position)
        self._buffer_position += cut
        if self._next:
            del self._values[: self._next]
            del self._ends[: self._next]
            self._next = 0
        self._values += values
        self._ends += ends
        return True

    def stop(self) -> None:
        """Close the file."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()


class FileStreamSinkConnector(SinkConnector):
    """Appends records to a file (or standard output); `tasks.max` identical tasks."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def config_def(self) -> ConfigDef:
        """`file`, `topics`."""
        return SINK_CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options and keep them for the tasks."""
        SINK_CONFIG_DEF.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_class(self) -> type[FileStreamSinkTask]:
        """`FileStreamSinkTask`."""
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """`max_tasks` copies of the configuration, as Connect does."""
        return [dict(self._props) for _ in range(max_tasks)]

    def alter_offsets(
        self, config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """True: this connector keeps no offsets of its own and needs no checks."""
        return True


def _render(value: Any) -> str:
    """A record value as one line of text (without its newline)."""
    if value is None:
        return "null"
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


class FileStreamSinkTask(SinkTask):
    """Writes each record's value (bytes decoded as UTF-8) followed by a newline."""

    def __init__(self) -> None:
        self._out: IO[str] | None = None
        self._owns_out = False

    def start(self, props: dict[str, str]) -> None:
        """Open the file for appending (standard output if `file` is not set)."""
        filename = SINK_CONFIG_DEF.parse(props)[FILE_CONFIG]
        if filename:
            self._out = open(filename, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop()
            self._owns_out = True
        else:
            self._out = sys.stdout
            self._owns_out = False

    def _stream(self) -> IO[str]:
        if self._out is None:
            raise EosConnectError("FileStreamSinkTask is not started")
        return self._out

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Append one line per record. The values are read a column at a time
        (`record_field`); text values (StringConverter's) are joined as they are, and when a
        value is not text (null, bytes, a number, a struct) each is rendered."""
        if not records:
            return
        values = record_field(records, "value")
        try:
            text = "\n".join(values)
        except TypeError:
            text = "\n".join(map(_render, values))
        self._stream().write(text + "\n")

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Flush and fsync so that everything put so far survives a crash."""
        out = self._stream()
        out.flush()
        if self._owns_out:
            os.fsync(out.fileno())

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Nothing is kept per partition."""

    def stop(self) -> None:
        """Close the file."""
        out, self._out = self._out, None
        if out is not None and self._owns_out:
            out.close()
