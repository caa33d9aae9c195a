"""Spark's Python worker daemon (`spark.python.daemon.module`) without the traceback a forked
worker prints when the JVM has closed its socket first.

When a task fails or is cancelled, or the session stops, the JVM closes the worker's socket;
pyspark's daemon then fails to flush what the worker had left to send and prints a
`BrokenPipeError` traceback on the executor's stderr (a local job's console) although nothing
went wrong beyond what the task's own error already says. Here a worker whose peer has gone
ends quietly, as pyspark's daemon ends it (the JVM starts a new worker for the next task); any
other error is printed and ends the worker as before.
"""

from __future__ import annotations

import socket
from typing import Any

from pyspark import daemon

PEER_GONE = (BrokenPipeError, ConnectionResetError)
"""What writing to a socket the JVM has closed raises."""

_serve = daemon.worker


def worker(sock: socket.socket, authenticated: bool) -> Any:
    """pyspark's `daemon.worker`, ending the worker (code 1) when its peer has gone."""
    try:
        return _serve(sock, authenticated)
    except PEER_GONE:
        return 1


if __name__ == "__main__":
    daemon.worker = worker  # the daemon's manager looks it up in its module at each fork
    daemon.manager()
