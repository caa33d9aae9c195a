"""A Schema Registry **test double**: a small in-memory HTTP server, not a Schema Registry.

It answers the part of Confluent Schema Registry's REST API that confluent-kafka's
`SchemaRegistryClient` (and so the converters) use, so that Spark executors in other processes
can share one registry in integration tests: register a subject version
(`POST /subjects/{s}/versions`), look a schema up under a subject (`POST /subjects/{s}`), get a
schema by id (`GET /schemas/ids/{id}`), list subjects and versions, get a version or `latest`,
delete a subject, the compatibility level (`GET/PUT /config[/{s}]`) and compatibility tests
(`POST /compatibility/subjects/{s}/versions[/{v}]`). Compatibility is checked for Avro only, with
Avro's resolution rules (`avro_compatibility`): NONE, BACKWARD (the default), FORWARD, FULL and
their `_TRANSITIVE` forms; JSON Schema and other types are accepted unchecked. Errors carry
Confluent's codes (40401 subject, 40402 version, 40403 schema not found, 409 incompatible,
42201 invalid schema). Nothing is persisted; no auth, no TLS, no modes, no references.

    with SchemaRegistryDouble() as registry:
        converter_options = {"value.converter.schema.registry.url": registry.url}
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from spark_eos_connect.testing.avro_compatibility import incompatibilities

__all__ = ["SchemaRegistryDouble"]

_LEVELS = {
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
}
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class _HttpError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class _Version:
    subject: str
    version: int
    schema_id: int
    schema: str
    schema_type: str

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema_id,
            "schema": self.schema,
        }
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        return out


@dataclass
class _State:
    """The registry's contents; every access holds `lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: dict[tuple[str, str], int] = field(default_factory=dict)
    by_id: dict[int, tuple[str, str]] = field(default_factory=dict)
    subjects: dict[str, list[_Version]] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)
    global_level: str = "BACKWARD"
    requests: list[str] = field(default_factory=list)


def _canonical(schema: str, schema_type: str) -> str:
    try:
        return json.dumps(json.loads(schema), separators=(",", ":"))
    except ValueError:
        raise _HttpError(422, 42201, f"Invalid {schema_type} schema: not JSON") from None


class SchemaRegistryDouble:
    """A Schema Registry test double on `127.0.0.1` (an ephemeral port unless `port`)."""

    def __init__(self, port: int = 0) -> None:
        self.state = _State()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give as `schema.registry.url`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[str]:
        """`METHOD path` of every request served so far (a copy)."""
        with self.state.lock:
            return list(self.state.requests)

    def start(self) -> SchemaRegistryDouble:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="schema-registry-double",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> SchemaRegistryDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    state: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `SchemaRegistryDouble.requests` instead."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
            with self.state.lock:
                self.state.requests.append(f"{method} {parts.path}")
                status, answer = _route(self.state, method, parts.path, query, body)
        except _HttpError as error:
            status, answer = error.status, {"error_code": error.code, "message": error.message}
        except ValueError as error:
            status, answer = 422, {"error_code": 42201, "message": f"Invalid request: {error}"}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", _CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"/schemas/ids/(\d+)"), "schema_by_id"),
    ("GET", re.compile(r"/schemas/ids/(\d+)/versions"), "id_versions"),
    ("GET", re.compile(r"/subjects"), "subjects"),
    ("GET", re.compile(r"/subjects/([^/]+)/versions"), "versions"),
    ("GET", re.compile(r"/subjects/([^/]+)/versions/([^/]+)"), "version"),
    ("POST", re.compile(r"/subjects/([^/]+)/versions"), "register"),
    ("POST", re.compile(r"/subjects/([^/]+)"), "lookup"),
    ("DELETE", re.compile(r"/subjects/([^/]+)"), "delete_subject"),
    ("GET", re.compile(r"/config"), "get_config"),
    ("GET", re.compile(r"/config/([^/]+)"), "get_config"),
    ("PUT", re.compile(r"/config"), "put_config"),
    ("PUT", re.compile(r"/config/([^/]+)"), "put_config"),
    ("POST", re.compile(r"/compatibility/subjects/([^/]+)/versions"), "test_all"),
    ("POST", re.compile(r"/compatibility/subjects/([^/]+)/versions/([^/]+)"), "test_version"),
]


def _route(
    state: _State, method: str, path: str, query: dict[str, str], body: Any
) -> tuple[int, Any]:
    for verb, pattern, name in _ROUTES:
        match = pattern.fullmatch(path.rstrip("/"))
        if verb == method and match is not None:
            args = [unquote(a) for a in match.groups()]
            return 200, globals()[f"_{name}"](state, query, body, *args)
    raise _HttpError(404, 404, f"HTTP 404 Not Found: {method} {path}")


def _subject_versions(state: _State, subject: str) -> list[_Version]:
    found = state.subjects.get(subject)
    if not found:
        raise _HttpError(404, 40401, f"Subject '{subject}' not found.")
    return found


def _schema_by_id(state: _State, query: dict[str, str], body: Any, schema_id: str) -> Any:
    found = state.by_id.get(int(schema_id))
    if found is None:
        raise _HttpError(404, 40403, f"Schema {schema_id} not found")
    schema, schema_type = found
    out: dict[str, Any] = {"schema": schema}
    if schema_type != "AVRO":
        out["schemaType"] = schema_type
    return out


def _id_versions(state: _State, query: dict[str, str], body: Any, schema_id: str) -> Any:
    return [
        {"subject": v.subject, "version": v.version}
        for versions in state.subjects.values()
        for v in versions
        if v.schema_id == int(schema_id)
    ]


def _subjects(state: _State, query: dict[str, str], body: Any) -> Any:
    return sorted(s for s, versions in state.subjects.items() if versions)


def _versions(state: _State, query: dict[str, str], body: Any, subject: str) -> Any:
    return [v.version for v in _subject_versions(state, subject)]


def _version(state: _State, query: dict[str, str], body: Any, subject: str, version: str) -> Any:
    return _pick(state, subject, version).body()


def _pick(state: _State, subject: str, version: str) -> _Version:
    versions = _subject_versions(state, subject)
    if version in ("latest", "-1"):
        return versions[-1]
    for v in versions:
        if str(v.version) == version:
            return v
    raise _HttpError(404, 40402, f"Version {version} not found.")


def _level(state: _State, subject: str) -> str:
    return state.levels.get(subject, state.global_level)


def _incompatible(state: _State, subject: str, schema: str, schema_type: str) -> list[str]:
    """Why `schema` may not join `subject` under its compatibility level."""
    level = _level(state, subject)
    versions = state.subjects.get(subject) or []
    if level == "NONE" or schema_type != "AVRO" or not versions:
        return []
    against = versions if level.endswith("_TRANSITIVE") else versions[-1:]
    new = json.loads(schema)
    problems: list[str] = []
    for old in against:
        previous = json.loads(old.schema)
        if level.startswith(("BACKWARD", "FULL")):
            found = incompatibilities(new, previous)
            problems += [f"version {old.version} (reading its data): {p}" for p in found]
        if level.startswith(("FORWARD", "FULL")):
            found = incompatibilities(previous, new)
            problems += [f"version {old.version} (it reading new data): {p}" for p in found]
    return problems


def _schema_of(body: Any) -> tuple[str, str]:
    if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
        raise _HttpError(422, 42201, "Invalid schema: the request has no schema string")
    schema_type = str(body.get("schemaType") or "AVRO").upper()
    return _canonical(body["schema"], schema_type), schema_type


def _register(state: _State, query: dict[str, str], body: Any, subject: str) -> Any:
    schema, schema_type = _schema_of(body)
    versions = state.subjects.setdefault(subject, [])
    for v in versions:
        if v.schema == schema and v.schema_type == schema_type:
            return {"id": v.schema_id, **v.body()}
    problems = _incompatible(state, subject, schema, schema_type)
    if problems:
        raise _HttpError(
            409,
            409,
            f"Schema being registered is incompatible with an earlier schema for subject "
            f'"{subject}" ({_level(state, subject)}): ' + "; ".join(problems),
        )
    key = (schema, schema_type)
    schema_id = state.ids.get(key)
    if schema_id is None:
        schema_id = len(state.ids) + 1
        state.ids[key] = schema_id
        state.by_id[schema_id] = key
    version = _Version(subject, (versions[-1].version + 1) if versions else 1, schema_id, *key)
    versions.append(version)
    return version.body()


def _lookup(state: _State, query: dict[str, str], body: Any, subject: str) -> Any:
    schema, schema_type = _schema_of(body)
    for v in _subject_versions(state, subject):
        if v.schema == schema and v.schema_type == schema_type:
            return v.body()
    raise _HttpError(404, 40403, "Schema not found")


def _delete_subject(state: _State, query: dict[str, str], body: Any, subject: str) -> Any:
    versions = _subject_versions(state, subject)
    state.subjects[subject] = []
    return [v.version for v in versions]


def _get_config(state: _State, query: dict[str, str], body: Any, subject: str = "") -> Any:
    return {"compatibilityLevel": _level(state, subject) if subject else state.global_level}


def _put_config(state: _State, query: dict[str, str], body: Any, subject: str = "") -> Any:
    level = str((body or {}).get("compatibility") or "").upper()
    if level not in _LEVELS:
        raise _HttpError(422, 42203, f"Invalid compatibility level {level!r}")
    if subject:
        state.levels[subject] = level
    else:
        state.global_level = level
    return {"compatibility": level}


def _test_all(state: _State, query: dict[str, str], body: Any, subject: str) -> Any:
    schema, schema_type = _schema_of(body)
    return {"is_compatible": not _incompatible(state, subject, schema, schema_type)}


def _test_version(state: _State, query: dict[str, str], body: Any, subject: str, v: str) -> Any:
    schema, schema_type = _schema_of(body)
    old = _pick(state, subject, v)
    if schema_type != "AVRO" or _level(state, subject) == "NONE":
        return {"is_compatible": True}
    new, previous = json.loads(schema), json.loads(old.schema)
    level = _level(state, subject)
    problems = []
    if level.startswith(("BACKWARD", "FULL")):
        problems += incompatibilities(new, previous)
    if level.startswith(("FORWARD", "FULL")):
        problems += incompatibilities(previous, new)
    out: dict[str, Any] = {"is_compatible": not problems}
    if query.get("verbose") == "true":
        out["messages"] = problems
    return out
