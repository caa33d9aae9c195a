"""The file connectors, with Kafka Connect's FileStream options and offset shapes.

`FileStreamSource` reads lines appended to a file: source partition `{"filename": <file>}`, offset
`{"position": <byte position after the line>}`, so a Connect worker could take over its offsets
(positions match Connect's for ASCII text). `FileStreamSink` appends one line per record.
Connectors run on the driver, tasks on executors.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Iterable
from typing import IO, Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    NonEmptyList,
    NonEmptyString,
    Range,
)
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
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

# A line ends at \n, \r\n or a lone \r, as in Connect's FileStreamSourceTask.
_END_OF_LINE: Final = re.compile(rb"\r\n|\r|\n")
_READ_SIZE: Final = 64 * 1024


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
    """Emits each complete line of the file as a str value, resuming from the stored position."""

    def __init__(self) -> None:
        self._filename = ""
        self._topic = ""
        self._batch_size = DEFAULT_BATCH_SIZE
        self._stream: IO[bytes] | None = None
        self._buffer = b""  # bytes read from the file but not yet emitted as lines
        self._buffer_position = 0  # file position of _buffer[0]
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
            stream = open(self._filename, "rb")  # noqa: SIM115 - kept open across polls
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
        self._buffer = b""
        self._buffer_position = position
        return True

    def poll(self) -> list[SourceRecord] | None:
        """Up to `batch.size` complete lines; None when there is no new complete line."""
        if self._stream is None and not self._open():
            return None
        assert self._stream is not None
        records: list[SourceRecord] = []
        timestamp = time.time_ns() // 1_000_000
        while True:
            self._extract_lines(records, timestamp)
            if len(records) >= self._batch_size:
                break
            chunk = self._stream.read(_READ_SIZE)
            if not chunk:
                break
            self._buffer += chunk
        return records or None

    def _extract_lines(self, records: list[SourceRecord], timestamp: int) -> None:
        buffer = self._buffer
        base = self._buffer_position
        start = 0
        end = len(buffer)
        for match in _END_OF_LINE.finditer(buffer):
            if len(records) >= self._batch_size:
                break
            line_end = match.end()
            if line_end == end and buffer[line_end - 1] == 0x0D:
                break  # a trailing \r may be the first half of \r\n: wait for more bytes
            records.append(
                SourceRecord(
                    {FILENAME_FIELD: self._filename},
                    {POSITION_FIELD: base + line_end},
                    self._topic,
                    buffer[start : match.start()].decode("utf-8", "replace"),
                    None,
                    None,
                    (),
                    timestamp,
                )
            )
            start = line_end
        if start:
            self._buffer = buffer[start:]
            self._buffer_position = base + start

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

    def put(self, records: list[SinkRecord]) -> None:
        """Append one line per record."""
        if records:
            self._stream().write("".join(_render(r.value) + "\n" for r in records))

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
