"""Where a live source task runs: one small process per task on each executor.

Spark hands each micro-batch of a task to whichever of its Python workers is free, so a task
kept inside a worker would be found again only by chance. Instead the first worker that runs a
task spawns a *task host* for it, a process that keeps the `LiveSourceTask` (task instance and
producer) between micro-batches; every later micro-batch of that task on this executor, in any
worker, is a request to that host over a Unix socket:

    worker → host: {"plan", "kafka", "batch_id", "attempt", "sys_path", "watch_pid"}
    host → worker: ("rows", RecordBatch)* then ("done", BatchResult) or ("error", exception)

Frames are length-prefixed pickles on a socket only this user can reach. The host serves one
request at a time, runs the task's micro-batch, and stops its task when a plan no longer
matches it, when it fails, after `HOST_IDLE_S` without requests, or when the worker's parent
(Spark's Python daemon, or the executor itself) is gone. It stays in the worker's process group,
so whatever kills the workers of an executor kills it too.

A task that fails is dropped. When Spark runs its micro-batch again (`attempt` > 0), here or
on another executor, the fresh task finds in the offsets topic what an earlier attempt
committed, if one did, and emits those rows (`source.replay`); once such a retry succeeds, the
host writes the task's RUNNING status over the FAILED one the failure left.
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
from spark_eos_connect.source.plan import SourceTaskPlan, spool_dir
from spark_eos_connect.source.task_loop import BatchResult, LiveSourceTask

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
    command = [sys.executable, "-m", "spark_eos_connect.source.host", str(path)]
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
    kafka: Mapping[str, Any], plan: SourceTaskPlan, batch_id: int | None, attempt: int = 0
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
                "attempt": attempt,
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


def report_task_status(
    kafka: Mapping[str, Any], plan: SourceTaskPlan, state: StatusState, trace: str | None = None
) -> None:
    """Best effort: the task's state (and trace) in the status topic (Connect's format)."""
    if not plan.status_topic:
        return
    from spark_eos_connect.storage.status_store import KafkaStatusStore

    try:
        store = KafkaStatusStore(plan.providers.resolve(kafka, prefix="kafka."), plan.status_topic)
        store.put_task_status(
            plan.connector, plan.task, state, worker_id(), plan.status_generation, trace
        )
        store.close()
    except Exception as error:  # the task's own outcome is what must surface
        log.warning("could not record task %d as %s: %s", plan.task, state.value, error)


def _portable(error: BaseException, trace: str) -> BaseException:
    """`error` if it survives pickling, else a `TaskHostError` with its text and traceback."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return TaskHostError(f"{type(error).__name__}: {error}\n{trace}")
    return error


class TaskHost:
    """Serves micro-batches of one task, keeping the task alive between them."""

    def __init__(self, path: Path, watch_pid: int) -> None:
        self.path = path
        self.watch_pid = watch_pid
        self.live: LiveSourceTask | None = None
        self.last_request = time.monotonic()

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
        if self.live is not None and (self.live.kafka != kafka or not self.live.matches(plan)):
            self._drop_task()
        started = time.monotonic()
        try:
            result = self._run(conn, kafka, plan, request["batch_id"])
        except (ConnectionError, OSError) as error:
            log.warning("task %d: the Spark task went away mid-batch (%s)", plan.task, error)
            self._drop_task()
            return
        except BaseException as error:
            trace = traceback.format_exc()
            self._drop_task()
            report_task_status(kafka, plan, StatusState.FAILED, trace)
            with contextlib.suppress(OSError):
                send_frame(conn, ("error", _portable(error, trace)))
            if not isinstance(error, Exception):
                raise
            return
        if result.replayed:
            log.info(
                "batch %s: %d records committed by an earlier attempt of this micro-batch, "
                "replayed",
                request["batch_id"],
                result.records,
            )
        else:
            log.info(
                "batch %s: %d records committed in %d transactions, %.3f s (%s task)",
                request["batch_id"],
                result.records,
                result.transactions,
                time.monotonic() - started,
                "kept" if result.reused else "fresh",
            )
        with contextlib.suppress(OSError):
            send_frame(conn, ("done", result))
        if request.get("attempt", 0) > 0:  # an earlier attempt failed, and most likely said so
            report_task_status(kafka, plan, StatusState.RUNNING)

    def _run(
        self, conn: socket.socket, kafka: dict[str, Any], plan: SourceTaskPlan, batch_id: Any
    ) -> BatchResult:
        """Run the batch; a kept producer that turns out fenced before anything committed is
        replaced once."""
        reused = self.live is not None
        if self.live is None:
            self.live = LiveSourceTask(kafka, plan)
        result = BatchResult()
        sent = False
        try:
            for rows in self.live.run_batch(plan, batch_id, result):
                send_frame(conn, ("rows", rows))
                sent = True
        except ProducerFencedError:
            if not reused or sent:  # rows already out: Spark's retry replays them, not us
                raise
            log.info("task %d: the kept producer was fenced; starting afresh", plan.task)
            self._drop_task()
            self.live = LiveSourceTask(kafka, plan)
            result = BatchResult()
            for rows in self.live.run_batch(plan, batch_id, result):
                send_frame(conn, ("rows", rows))
        if self.live.stale:
            self._drop_task()
        return result


def main(argv: list[str]) -> None:
    """`python -m spark_eos_connect.source.host SOCKET WATCH_PID`."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    # A task allocates records by the hundred thousand and frees them after each commit: the
    # default young-generation threshold (700) runs the collector thousands of times a batch.
    gc.set_threshold(50_000, 20, 20)
    TaskHost(Path(argv[0]), int(argv[1])).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
