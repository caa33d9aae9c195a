"""Sending one REST request to Kafka Connect and to the project, and comparing the answers.

Bodies are compared by *shape*: the same keys, the same JSON types, and the same values where
the value is the point (connector and task states, connector type, error codes); worker ids,
traces and messages may differ. Every failure prints both bodies.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from spark_eos_connect.apps.connect_worker import ConnectWorker

KEPT_VALUES = frozenset({"state", "type", "error_code"})
"""Keys whose values must be equal, not only of the same type."""
CONNECT_ONLY_KEYS = frozenset({"version"})
"""Keys only Connect's states carry: KIP-891's plugin version, which this project's status
records do not hold (a known difference, asserted where it shows)."""


def shape(body: Any, ignored: Iterable[str] = ()) -> Any:
    """`body` with every value replaced by its JSON type, except under `KEPT_VALUES`; keys in
    `ignored` are left out at any depth."""
    skip = frozenset(ignored)
    if isinstance(body, dict):
        return {
            key: value if key in KEPT_VALUES else shape(value, skip)
            for key, value in body.items()
            if key not in skip
        }
    if isinstance(body, list):
        return [shape(item, skip) for item in body]
    if body is None:
        return "null"
    if isinstance(body, bool):
        return "boolean"
    if isinstance(body, int):
        return "integer"
    if isinstance(body, float):
        return "number"
    return "string"


@dataclass(frozen=True)
class Answer:
    """One side's answer: status code and decoded body (None when empty)."""

    status: int
    body: Any


@dataclass(frozen=True)
class Exchange:
    """The same request answered by Connect and by the project."""

    request: str
    connect: Answer
    project: Answer

    def report(self, problem: str) -> str:
        """`problem`, the request and both answers, for a failure message."""
        return (
            f"{problem}\nrequest: {self.request}\n"
            f"connect: {self.connect.status} {json.dumps(self.connect.body, sort_keys=True)}\n"
            f"project: {self.project.status} {json.dumps(self.project.body, sort_keys=True)}"
        )

    def same_status(self, expected: int | None = None) -> Exchange:
        """Both answered with the same status (`expected`, when given)."""
        statuses = (self.connect.status, self.project.status)
        assert statuses[0] == statuses[1], self.report("status codes differ")
        if expected is not None:
            assert statuses[0] == expected, self.report(f"expected status {expected}")
        return self

    def same_shape(self, ignored: Iterable[str] = CONNECT_ONLY_KEYS) -> Exchange:
        """Same status and same body shape (keys in `ignored` left out)."""
        self.same_status()
        connect, project = shape(self.connect.body, ignored), shape(self.project.body, ignored)
        assert connect == project, self.report(
            f"body shapes differ\nconnect shape: {connect}\nproject shape: {project}"
        )
        return self

    def same_body(self) -> Exchange:
        """Same status and exactly the same body."""
        self.same_status()
        assert self.connect.body == self.project.body, self.report("bodies differ")
        return self

    def is_error(self, connect_status: int, project_status: int) -> Exchange:
        """Both are errors in Connect's shape `{"error_code":N,"message":...}` with these
        statuses (different ones only where the project differs on purpose)."""
        for answer, status in ((self.connect, connect_status), (self.project, project_status)):
            assert answer.status == status, self.report(
                f"expected {connect_status}/{project_status}"
            )
            assert shape(answer.body) == {"error_code": status, "message": "string"}, self.report(
                "not Connect's error shape"
            )
        return self


class Pair:
    """Sends each request to the Connect worker and to the project's REST app."""

    def __init__(self, worker: ConnectWorker, project: httpx.Client) -> None:
        self.worker = worker
        self.project = project

    def send(self, method: str, path: str, body: Any = None) -> Exchange:
        """The same request (a JSON body, or raw bytes) to both."""
        connect = Answer(*self.worker.call(method, path, body))
        if body is None:
            response = self.project.request(method, path)
        else:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"}
            response = self.project.request(method, path, content=raw, headers=headers)
        project = Answer(response.status_code, response.json() if response.content else None)
        shown = body.decode(errors="replace") if isinstance(body, bytes) else json.dumps(body)
        return Exchange(f"{method} {path} {shown if body is not None else ''}", connect, project)
