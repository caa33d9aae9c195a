"""Where a live source task runs: one small process per task on each executor.

Spark hands each micro-batch of a task to whichever of its Python workers is free, so a task
kept inside a worker would be found again only by chance. Instead the first worker that runs a
task spawns a *task host* for it, a process that keeps the `LiveSourceTask` (task instance and
producer) between micro-batches; every later micro-batch of that task on this executor, in any
worker, is a request to that host over a Unix socket:

    worker → host: {"plan", "kafka", "batch_id", "sys_path", "watch_pid"}
    host → worker: ("rows", RecordBatch)* then ("done", BatchResult) or ("error", exception)

Frames are length-prefixed pickles on a socket only this user can reach. The host serves one
request at a time, runs the task's micro-batch, and stops its task when a plan no longer
matches it, when it fails, after `HOST_IDLE_S` without requests, or when the worker's parent
(Spark's Python daemon, or the executor itself) is gone. It stays in the worker's process group,
so whatever kills the workers of an executor kills it too.

A host remembers the rows of the last micro-batch whose attempt committed something, with the
plan it ran. When Spark runs that micro-batch again (a task retry, the same plan and batch id),
the host answers with those rows and runs nothing: the retry emits exactly the records the
earlier attempt committed, so a downstream sink misses none of them.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import logging
import os
import pickle
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.producers import ProducerFencedError
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.leadership import worker_id
from spark_eos_connect.runtime.live_task import BatchResult, LiveSourceTask
from spark_eos_connect.runtime.source_plan import SourceTaskPlan, spool_dir

log = logging.getLogger(__name__)

HOST_IDLE_S = 30.0
"""A host whose task got no micro-batch for this long stops it and exits."""

HOST_START_TIMEOUT_S = 60.0
MAX_SOCKET_DIR_LENGTH = 80
_HEADER = struct.Struct("!Q")


class TaskHostError(EosConnectError):
    """The task host failed; the message carries its error and traceback."""


# -- framing -----------------------------------------------------------------------------------


def send_frame(sock: socket.socket, payload: Any) -> None:
    """Send one length-prefixed pickle."""
    data = pickle.dumps(payload, protocol=5)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise ConnectionError("the other end closed the connection")
        chunks += chunk
    return bytes(chunks)


def recv_frame(sock: socket.socket) -> Any:
    """Receive one length-prefixed pickle."""
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    return pickle.loads(_recv_exact(sock, size))


# -- where a task's host listens ---------------------------------------------------------------


def host_socket_path(kafka: Mapping[str, Any], plan: SourceTaskPlan) -> Path:
    """The socket of the host of `plan`'s task on this machine (one per cluster and task id)."""
    identity = "\0".join(
        [str(kafka.get("bootstrap.servers")), plan.transactional_id, str(os.getuid())]
    )
    digest = hashlib.sha1(identity.encode()).hexdigest()[:20]
    folder = spool_dir() / "hosts"
    if len(str(folder)) > MAX_SOCKET_DIR_LENGTH:  # a Unix socket path has at most 107 bytes
        folder = Path(tempfile.gettempdir()) / f"eosconnect-hosts-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"{digest}.sock"


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def _spawn_host(path: Path, watch_pid: int) -> None:
    """Start a detached host process (reparented, same process group) listening on `path`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    command = [sys.executable, "-m", "spark_eos_connect.runtime.task_host", str(path)]
    command.append(str(watch_pid))
    log_file = path.with_suffix(".log")
    launcher = (
        "import subprocess, sys\n"
        "log = open(sys.argv[1], 'ab')\n"
        "subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log,"
        " close_fds=True)\n"
    )
    subprocess.run([sys.executable, "-c", launcher, str(log_file), *command], env=env, check=True)


def connect_to_host(path: Path, watch_pid: int) -> socket.socket:
    """A connection to the host at `path`, starting it first if none is listening."""
    sock = _connect(path)
    if sock is not None:
        return sock
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = _connect(path)
        if sock is not None:
            return sock
        path.unlink(missing_ok=True)
        _spawn_host(path, watch_pid)
        deadline = time.monotonic() + HOST_START_TIMEOUT_S
        while time.monotonic() < deadline:
            sock = _connect(path)
            if sock is not None:
                return sock
            time.sleep(0.02)
    raise TaskHostError(
        f"the task host did not start within {HOST_START_TIMEOUT_S:.0f}s; "
        f"see {path.with_suffix('.log')}"
    )


# -- worker side -------------------------------------------------------------------------------


def run_on_host(
    kafka: Mapping[str, Any], plan: SourceTaskPlan, batch_id: int | None
) -> Iterator[pa.RecordBatch]:
    """Run `plan` on its task's host; yields the rows of what it committed."""
    sock = connect_to_host(host_socket_path(kafka, plan), os.getppid())
    with sock:
        send_frame(
            sock,
            {
                "plan": plan,
                "kafka": dict(kafka),
                "batch_id": batch_id,
                "sys_path": list(sys.path),
                "watch_pid": os.getppid(),
            },
        )
        while True:
            kind, payload = recv_frame(sock)
            if kind == "rows":
                yield payload
            elif kind == "done":
                return
            else:
                raise payload


# -- host side ---------------------------------------------------------------------------------


def report_task_failure(kafka: Mapping[str, Any], plan: SourceTaskPlan, trace: str) -> None:
    """Best effort: the task's FAILED state and trace in the status topic (Connect's format)."""
    if not plan.status_topic:
        return
    from spark_eos_connect.storage.status_store import KafkaStatusStore

    try:
        store = KafkaStatusStore(plan.providers.resolve(kafka, prefix="kafka."), plan.status_topic)
        store.put_task_status(plan.connector, plan.task, StatusState.FAILED, worker_id(), 0, trace)
        store.close()
    except Exception as error:  # the task's own failure is what must surface
        log.warning("could not record the failure of task %d: %s", plan.task, error)


def _portable(error: BaseException, trace: str) -> BaseException:
    """`error` if it survives pickling, else a `TaskHostError` with its text and traceback."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return TaskHostError(f"{type(error).__name__}: {error}\n{trace}")
    return error


def attempt_key(plan: SourceTaskPlan, batch_id: Any) -> bytes:
    """What two attempts of the same micro-batch of a task share: the batch id and the plan
    the driver made for it (generation, committed offsets, offsets-topic positions)."""
    return pickle.dumps(
        (
            batch_id,
            plan.transactional_id,
            plan.generation_commit_offset,
            plan.committed,
            sorted(plan.offsets_positions.items()),
        )
    )


class TaskHost:
    """Serves micro-batches of one task, keeping the task alive between them."""

    def __init__(self, path: Path, watch_pid: int) -> None:
        self.path = path
        self.watch_pid = watch_pid
        self.live: LiveSourceTask | None = None
        self.last_request = time.monotonic()
        self.replay: tuple[bytes, list[pa.RecordBatch]] | None = None
        """The last micro-batch that committed something: its attempt key and its rows."""
        self._sent: list[pa.RecordBatch] = []

    def serve(self) -> None:
        """Accept requests until idle for `HOST_IDLE_S` or the watched process is gone."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        listener.listen(8)
        listener.settimeout(1.0)
        try:
            while not self._should_exit():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    self.handle(conn)
                self.last_request = time.monotonic()
        finally:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self._drop_task()

    def _should_exit(self) -> bool:
        if time.monotonic() - self.last_request > HOST_IDLE_S:
            return True
        try:
            os.kill(self.watch_pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return False

    def _drop_task(self) -> None:
        if self.live is not None:
            self.live.close()
            self.live = None

    def handle(self, conn: socket.socket) -> None:
        """One micro-batch of the task."""
        conn.settimeout(None)
        request = recv_frame(conn)
        for entry in request["sys_path"]:
            if entry not in sys.path:
                sys.path.append(entry)
        plan: SourceTaskPlan = request["plan"]
        kafka: dict[str, Any] = request["kafka"]
        key = attempt_key(plan, request["batch_id"])
        if self.replay is not None and self.replay[0] == key:
            self._replay(conn, plan, request["batch_id"], self.replay[1])
            return
        if self.live is not None and (self.live.kafka != kafka or not self.live.matches(plan)):
            self._drop_task()
        started = time.monotonic()
        self._sent = []
        try:
            result = self._run(conn, kafka, plan, request["batch_id"])
        except (ConnectionError, OSError) as error:
            log.warning("task %d: the Spark task went away mid-batch (%s)", plan.task, error)
            self._remember(key)
            self._drop_task()
            return
        except BaseException as error:
            trace = traceback.format_exc()
            self._remember(key)
            self._drop_task()
            report_task_failure(kafka, plan, trace)
            with contextlib.suppress(OSError):
                send_frame(conn, ("error", _portable(error, trace)))
            if not isinstance(error, Exception):
                raise
            return
        log.info(
            "batch %s: %d records committed in %d transactions, %.3f s (%s task)",
            request["batch_id"],
            result.records,
            result.transactions,
            time.monotonic() - started,
            "kept" if result.reused else "fresh",
        )
        self._remember(key)
        with contextlib.suppress(OSError):
            send_frame(conn, ("done", result))

    def _remember(self, key: bytes) -> None:
        """Keep what this attempt committed (sent, or committed but not yet sent) for a replay."""
        rows = self._sent + (self.live.unsent_rows() if self.live is not None else [])
        self._sent = []
        self.replay = (key, rows) if rows else None

    def _replay(
        self, conn: socket.socket, plan: SourceTaskPlan, batch_id: Any, rows: list[pa.RecordBatch]
    ) -> None:
        """Answer a re-run of the remembered micro-batch with its committed rows."""
        result = BatchResult(connector=plan.connector, task=plan.task, replayed=True)
        result.records = sum(batch.num_rows for batch in rows)
        log.info(
            "batch %s: %d records committed by an earlier attempt of this micro-batch, replayed",
            batch_id,
            result.records,
        )
        with contextlib.suppress(OSError):
            for batch in rows:
                send_frame(conn, ("rows", batch))
            send_frame(conn, ("done", result))

    def _send_rows(self, conn: socket.socket, rows: pa.RecordBatch) -> None:
        self._sent.append(rows)
        send_frame(conn, ("rows", rows))

    def _run(
        self, conn: socket.socket, kafka: dict[str, Any], plan: SourceTaskPlan, batch_id: Any
    ) -> BatchResult:
        """Run the batch; a kept producer that turns out fenced is replaced once."""
        reused = self.live is not None
        if self.live is None:
            self.live = LiveSourceTask(kafka, plan)
        result = BatchResult()
        try:
            for rows in self.live.run_batch(plan, batch_id, result):
                self._send_rows(conn, rows)
        except ProducerFencedError:
            if not reused:
                raise
            log.info("task %d: the kept producer was fenced; starting afresh", plan.task)
            self._drop_task()
            self.live = LiveSourceTask(kafka, plan)
            result = BatchResult()
            for rows in self.live.run_batch(plan, batch_id, result):
                self._send_rows(conn, rows)
        if self.live.stale:
            self._drop_task()
        return result


def main(argv: list[str]) -> None:
    """`python -m spark_eos_connect.runtime.task_host SOCKET WATCH_PID`."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    # A task allocates records by the hundred thousand and frees them after each commit: the
    # default young-generation threshold (700) runs the collector thousands of times a batch.
    gc.set_threshold(50_000, 20, 20)
    TaskHost(Path(argv[0]), int(argv[1])).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
