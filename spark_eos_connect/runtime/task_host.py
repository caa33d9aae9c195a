"""Where a live task runs between micro-batches: one small process per task on each executor.

Spark hands each micro-batch of a task to whichever of its Python workers is free, so a task
kept inside a worker would be found again only by chance. Instead the first worker that runs a
task spawns a *task host* for it, a process that keeps the task (its connector instance and
clients) between micro-batches; every later micro-batch of that task on this executor, in any
worker, is a request to that host over a Unix socket:

    worker → host: {"service", "sys_path", "watch_pid", ...the service's own fields}
    host → worker: ("rows", payload)* then ("done", result) or ("error", exception)

Frames are length-prefixed pickles on a socket only this user can reach. What a host does with
a request is its *service*'s business (`HostedService`): the source side's keeps a
`LiveSourceTask`, the sink side's a `LiveSinkTask`; the request names the service by its class
path, so this module knows neither. The host serves one request at a time, closes its service
after `HOST_IDLE_S` without requests or when the worker's parent (Spark's Python daemon, or the
executor itself) is gone, and stays in the worker's process group, so whatever kills the
workers of an executor kills it too. pyspark's daemon ends that group with SIGHUP when the
executor shuts down (a session stopping, a program exiting with its query running): a host
then finishes the request it serves (a micro-batch ends by itself), closes its service (the
task's open transaction aborted) and exits, rather than dying with a transaction open that
read_committed readers would wait on until the broker's `transaction.timeout.ms`. A worker
that must start a host takes a spare one, started ahead with its imports done, when the
executor has one (`host_spares`).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import importlib
import logging
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.plugins.loader import class_path, load_class
from spark_eos_connect.runtime import host_spares

log = logging.getLogger(__name__)

HOST_IDLE_S = 30.0
"""A host whose task got no micro-batch for this long closes it and exits."""

HOST_START_TIMEOUT_S = 60.0
SPARE_WAIT_S = 5.0
"""How long a worker waits for a spare host that is starting before it starts a host itself."""
MAX_SOCKET_DIR_LENGTH = 80
SPOOL_ENV = "EOSCONNECT_SPOOL_DIR"
HOST_MODULE = "spark_eos_connect.runtime.task_host"
"""What a host runs (`python -m`): this module, also when a host (`__main__`) starts a spare."""
_HEADER = struct.Struct("!Q")

Reply = Callable[[str, Any], None]
"""`reply(kind, payload)`: one frame back to the worker (`rows` while serving)."""


class TaskHostError(EosConnectError):
    """The task host failed; the message carries its error and traceback."""


class HostedService(Protocol):
    """What a task host keeps between requests (one instance per host process)."""

    def serve(self, request: Mapping[str, Any], reply: Reply) -> Any:
        """Serve one request, sending `rows` frames with `reply`; the result is sent as `done`.
        Raising sends the error back (the service is closed first)."""
        ...

    def close(self) -> None:
        """The host goes away (idle, its watched process gone, or a failure): let go of the
        task and its clients."""
        ...


def spool_dir() -> Path:
    """Executor-local folder for the sockets and logs of task hosts."""
    return Path(os.environ.get(SPOOL_ENV) or Path(tempfile.gettempdir()) / "eosconnect-spool")


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


def portable(error: BaseException, trace: str) -> BaseException:
    """`error` if it survives pickling, else a `TaskHostError` with its text and traceback."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return TaskHostError(f"{type(error).__name__}: {error}\n{trace}")
    return error


# -- where a task's host listens ---------------------------------------------------------------


def host_socket_path(kafka: Mapping[str, Any], task_identity: str) -> Path:
    """The socket of the host of one task on this machine: one per Kafka cluster, task identity
    (a source task's transactional id, a sink task's group and number) and user."""
    identity = "\0".join([str(kafka.get("bootstrap.servers")), task_identity, str(os.getuid())])
    digest = hashlib.sha1(identity.encode()).hexdigest()[:20]
    return hosts_folder() / f"{digest}.sock"


def hosts_folder() -> Path:
    """Where this machine's task hosts (and spares) listen, made if need be."""
    folder = spool_dir() / "hosts"
    if len(str(folder)) > MAX_SOCKET_DIR_LENGTH:  # a Unix socket path has at most 107 bytes
        folder = Path(tempfile.gettempdir()) / f"eosconnect-hosts-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def _spawn_host(path: Path, watch_pid: int, warm_module: str | None = None) -> None:
    """Start a detached host process (reparented, same process group) listening on `path`; a
    spare when `warm_module` names the module it imports before it listens."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    command = [sys.executable, "-m", HOST_MODULE, str(path), str(watch_pid)]
    if warm_module is not None:
        command += ["--spare", warm_module]
    log_file = path.with_suffix(".log")
    launcher = (
        "import subprocess, sys\n"
        "log = open(sys.argv[1], 'ab')\n"
        "subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log,"
        " close_fds=True)\n"
    )
    subprocess.run([sys.executable, "-c", launcher, str(log_file), *command], env=env, check=True)


def connect_to_host(path: Path, watch_pid: int) -> socket.socket:
    """A connection to the host at `path`; if none is listening, a spare host is claimed for
    it, or a host started."""
    sock = _connect(path)
    if sock is not None:
        return sock
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = _connect(path)
        if sock is not None:
            return sock
        path.unlink(missing_ok=True)
        sock = host_spares.claim_spare(path, watch_pid, _connect, SPARE_WAIT_S)
        if sock is not None:
            return sock
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


def call_host(
    path: Path, service: type[HostedService], request: Mapping[str, Any]
) -> Iterator[tuple[str, Any]]:
    """Send `request` to `service` on the host at `path` (started if need be); yields the
    `rows` frames and last the `done` one; an `error` frame is raised."""
    watch_pid = os.getppid()
    sock = connect_to_host(path, watch_pid)
    with sock:
        frame = {
            **request,
            "service": class_path(service),
            "sys_path": list(sys.path),
            "watch_pid": watch_pid,
            "host_path": str(path),
        }
        send_frame(sock, frame)
        while True:
            kind, payload = recv_frame(sock)
            if kind == "error":
                raise payload
            yield kind, payload
            if kind == "done":
                return


# -- host side ---------------------------------------------------------------------------------


_shutdown_asked = False
"""SIGHUP came: the executor shuts down (`_ask_shutdown`)."""


def _ask_shutdown(signum: int, frame: Any) -> None:
    """Exit once the request being served ends (a handler that raised would cut a Kafka
    client's call short, which reports it as the task's failure)."""
    global _shutdown_asked
    _shutdown_asked = True


class TaskHost:
    """Serves requests for one task, keeping its service alive between them."""

    def __init__(self, path: Path, watch_pid: int, spare: bool = False) -> None:
        self.path = path
        self.watch_pid = watch_pid
        self.spare = spare
        """Not claimed by a task yet (`host_spares`)."""
        self.service: HostedService | None = None
        self.last_request = time.monotonic()
        self.topped_up = False
        """The spares were topped up since the last request."""

    def serve_forever(self) -> None:
        """Accept requests until idle for `HOST_IDLE_S` (`SPARE_IDLE_S` for a spare) or the
        watched process is gone; once idle for a moment, start the executor's missing
        spares."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        listener.listen(8)
        listener.settimeout(0.25)
        if self.spare:
            host_spares.spare_ready(self.path)
        try:
            self._serve_until_exit(listener)
        finally:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self.close_service()

    def _serve_until_exit(self, listener: socket.socket) -> None:
        """Accept and handle requests until `_should_exit`."""
        while not self._should_exit():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                self._top_up_spares()
                continue
            with conn, host_spares.busy(self.path.parent, self.watch_pid):
                self.handle(conn)
            self.last_request = time.monotonic()
            self.topped_up = False

    def _top_up_spares(self) -> None:
        """Start the missing spares, with this host's service module imported, once per idle
        spell of `TOP_UP_AFTER_IDLE_S` during which no host of the executor serves."""
        idle = time.monotonic() - self.last_request
        if self.spare or self.service is None or self.topped_up:
            return
        if idle < host_spares.TOP_UP_AFTER_IDLE_S:
            return
        if host_spares.executor_busy(self.path.parent, self.watch_pid):
            return  # another task's micro-batch runs: not now
        self.topped_up = True
        module = type(self.service).__module__
        host_spares.top_up_spares(
            self.path.parent,
            self.watch_pid,
            lambda spare: _spawn_host(spare, self.watch_pid, warm_module=module),
        )

    def _should_exit(self) -> bool:
        if _shutdown_asked:
            return True
        idle = time.monotonic() - self.last_request
        if self.spare and idle > host_spares.SPARE_IDLE_S and host_spares.retire(self.path):
            return True  # retired (a claimed spare is not: its task's request is coming)
        if not self.spare and idle > HOST_IDLE_S:
            return True
        try:
            os.kill(self.watch_pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return False

    def _adopt(self, path: Path) -> None:
        """A claimed spare now serves `path`: its name, and its log beside it."""
        self.path, self.spare = path, False
        os.environ[SERVING_ENV] = str(path)
        with open(path.with_suffix(".log"), "ab") as log_file:
            os.dup2(log_file.fileno(), 1)
            os.dup2(log_file.fileno(), 2)
        log.info("spare host now serves %s", path)

    def close_service(self) -> None:
        """Close the service (its task), if any."""
        if self.service is not None:
            service, self.service = self.service, None
            try:
                service.close()
            except Exception:
                log.exception("closing the task host's service failed")

    def handle(self, conn: socket.socket) -> None:
        """One request: find (or make) the service it names and let it serve."""
        conn.settimeout(None)
        request = recv_frame(conn)
        named = request.get("host_path")
        if named and Path(named) != self.path:
            self._adopt(Path(named))
        for entry in request["sys_path"]:
            if entry not in sys.path:
                sys.path.append(entry)
        kind = load_class(request["service"], "task host service", object)
        if self.service is not None and type(self.service) is not kind:
            self.close_service()
        if self.service is None:
            self.service = cast(HostedService, kind())
        service = self.service

        def reply(frame_kind: str, payload: Any) -> None:
            send_frame(conn, (frame_kind, payload))

        try:
            result = service.serve(request, reply)
        except (ConnectionError, OSError) as error:
            log.warning("the Spark task went away mid-request (%s)", error)
            self.close_service()
            return
        except BaseException as error:
            trace = traceback.format_exc()
            self.close_service()
            with contextlib.suppress(OSError):
                send_frame(conn, ("error", portable(error, trace)))
            if not isinstance(error, Exception):
                raise
            return
        with contextlib.suppress(OSError):
            send_frame(conn, ("done", result))


SERVING_ENV = "EOSCONNECT_TASK_HOST_SOCKET"
"""Set in a task host's environment: the socket it serves (`serving_path`)."""


def serving_path() -> Path | None:
    """The socket of the task host this process is (None outside a host): what names the
    host's task, the same for a host started again for that task."""
    value = os.environ.get(SERVING_ENV)
    return Path(value) if value else None


def warm_up(module: str) -> None:
    """A spare's imports: the service's module, and pandas, which pyarrow imports on the first
    array it makes."""
    try:
        importlib.import_module(module)
        if "pyarrow" in sys.modules:
            sys.modules["pyarrow"].array([0])
    except Exception:  # the request that claims this spare will report it
        log.exception("a spare host could not import %s", module)


def main(argv: list[str]) -> None:
    """`python -m spark_eos_connect.runtime.task_host SOCKET WATCH_PID [--spare MODULE]`
    (`_spawn_host`)."""
    os.environ[SERVING_ENV] = argv[0]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    # A task allocates records by the hundred thousand and frees them after each batch: the
    # default young-generation threshold (700) runs the collector thousands of times a batch.
    gc.set_threshold(50_000, 20, 20)
    signal.signal(signal.SIGHUP, _ask_shutdown)
    spare = argv[2:3] == ["--spare"]
    if spare:
        warm_up(argv[3])
    TaskHost(Path(argv[0]), int(argv[1]), spare=spare).serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
