"""A JVM task host process and its requests (the protocol: `TaskHostMain`'s class comment).

One host serves one Python process: `shared_host(plugin_path)` spawns it on first use and
hands the same one out afterwards (a task host keeps its JVM across micro-batches; a driver
keeps one for its connectors). The JVM reads its requests from a pipe, so it ends when this
process does; `close_hosts` (at exit) ends it sooner.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import subprocess
import threading
from collections.abc import Callable, Sequence

from spark_eos_connect.jvm_tasks.classpath import task_host_command
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.wire import (
    ANSWER,
    CONNECTOR_QUERY,
    ERROR,
    QUERY,
    FrameReader,
    FrameWriter,
    frame_length,
)

log = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = 10.0

Answer = Callable[[list[str | None]], list[str | None]]
"""Answers a QUERY: one offset JSON (None: none) per source partition JSON."""


class TaskHostProcess:
    """One JVM task host over the `plugin.path` entries `plugin_path`."""

    def __init__(self, plugin_path: Sequence[str]) -> None:
        self.plugin_path = list(plugin_path)
        self._process = subprocess.Popen(
            task_host_command(self.plugin_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._lock = threading.Lock()
        self._broken = False
        self._connector_answers: dict[int, Answer] = {}
        log.info("JVM task host pid %d started (plugin.path %s)", self.pid, self.plugin_path)

    @property
    def pid(self) -> int:
        """The JVM's process id."""
        return self._process.pid

    def alive(self) -> bool:
        """Whether the JVM still runs and answers (a pipe that broke means it does not, even
        before the process is reaped)."""
        return not self._broken and self._process.poll() is None

    def answer_connector(self, handle: int, answer: Answer | None) -> None:
        """Answer the offset queries of the connector started as `handle` (its own reader's)
        with `answer` from now on; None: no longer (they are answered "no offset")."""
        with self._lock:
            if answer is None:
                self._connector_answers.pop(handle, None)
            else:
                self._connector_answers[handle] = answer

    def call(self, request: FrameWriter, answer: Answer | None = None) -> FrameReader:
        """Send `request` and return its reply, answering the host's offset queries with
        `answer` meanwhile (a started connector's with its own, `answer_connector`); an ERROR
        reply raises `JavaPluginError` with the Java trace."""
        with self._lock:
            self._write(request.frame())
            while True:
                reply = self._read()
                if reply.kind in (QUERY, CONNECTOR_QUERY):
                    asking = answer
                    if reply.kind == CONNECTOR_QUERY:
                        asking = self._connector_answers.get(reply.i32())
                    partitions = reply.texts()
                    offsets = asking(partitions) if asking else [None] * len(partitions)
                    self._write(FrameWriter(ANSWER).texts(offsets).frame())
                    continue
                if reply.kind == ERROR:
                    java_class, message, trace = reply.text(), reply.text(), reply.text()
                    raise JavaPluginError(f"{java_class}: {message}", java_class or "", trace or "")
                return reply

    def _write(self, frame: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(frame)
            stdin.flush()
        except (BrokenPipeError, ValueError) as error:
            raise self._gone() from error

    def _read(self) -> FrameReader:
        stdout = self._process.stdout
        assert stdout is not None
        header = stdout.read(4)
        if len(header) < 4:
            raise self._gone()
        size = frame_length(header)
        body = stdout.read(size)
        if len(body) < size:
            raise self._gone()
        return FrameReader(body)

    def _gone(self) -> JavaPluginError:
        self._broken = True
        code = self._process.poll()
        return JavaPluginError(
            f"the JVM task host (pid {self.pid}, plugin.path {self.plugin_path}) "
            f"{'exited with code ' + str(code) if code is not None else 'stopped answering'}; "
            "its log is this process's stderr"
        )

    def close(self) -> None:
        """End the JVM: its input closes (it stops what runs), killed if it lingers."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


_HOSTS: dict[tuple[str, ...], TaskHostProcess] = {}
_HOSTS_LOCK = threading.Lock()


def shared_host(plugin_path: Sequence[str]) -> TaskHostProcess:
    """This process's task host for `plugin_path` (spawned, or spawned again if it died)."""
    key = tuple(plugin_path)
    with _HOSTS_LOCK:
        host = _HOSTS.get(key)
        if host is not None and not host.alive():
            host.close()  # reaped before a new one starts
            host = None
        if host is None:
            host = _HOSTS[key] = TaskHostProcess(key)
        return host


def running_hosts() -> list[TaskHostProcess]:
    """The task hosts this process has spawned and not closed (alive or not)."""
    with _HOSTS_LOCK:
        return list(_HOSTS.values())


@atexit.register
def close_hosts() -> None:
    """End every task host of this process."""
    with _HOSTS_LOCK:
        hosts = list(_HOSTS.values())
        _HOSTS.clear()
    for host in hosts:
        host.close()


def offset_answer(lookup: Callable[[dict[str, object]], dict[str, object] | None]) -> Answer:
    """An `Answer` from a lookup of one source partition's committed offset."""

    def answer(partitions: list[str | None]) -> list[str | None]:
        found = [lookup(json.loads(p or "{}")) for p in partitions]
        return [None if o is None else json.dumps(o, separators=(",", ":")) for o in found]

    return answer
