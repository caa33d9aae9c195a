"""`eosconnect rest` under hostile and careless requests (issue 27), on the real broker: each
defect the fuzzing found, the server's memory under four concurrent 10 MB bodies, and a bounded
loopback fuzz run (fixed seed) asserting no 5xx and Connect's error body on every refusal."""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.rest import create_app
from spark_eos_connect.testing import wait_for

from .test_rest_security import PASSWORD, RestServer, answers, credentials_file, rest_argv, stop

pytestmark = pytest.mark.integration

C = {"connector.class": "Generator", "topic": "t"}
MB = 1024 * 1024
AUTH = ("admin", PASSWORD)
SENTINEL = "eosconnect_i27_sentinel"


@pytest.fixture
def start_server(
    bootstrap_servers: str, settings: WorkerSettings, tmp_path: Path
) -> Iterator[Callable[..., RestServer]]:
    """`start_server(*options)`: `eosconnect rest` on a free loopback port, answering."""
    started: list[tuple[RestServer, IO[bytes]]] = []

    def start(*options: str, auth: tuple[str, str] | None = None) -> RestServer:
        port = free_port()
        log_path = tmp_path / f"rest-{port}.log"
        log = log_path.open("wb")
        argv = rest_argv(bootstrap_servers, settings, "--port", str(port), *options)
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        server = RestServer(process, f"http://127.0.0.1:{port}", log_path)
        started.append((server, log))
        wait_for(lambda: answers(server, auth=auth), 60, "eosconnect rest to answer")
        return server

    yield start
    for server, log in started:
        stop(server)
        log.close()


def assert_connect_error(response: httpx.Response, status: int, fragment: str = "") -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error_code"] == status
    assert fragment in body["message"], body["message"]


def rss_bytes(pid: int) -> int:
    """Resident memory of process `pid` (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


# --- 1, 2, 9, 10: names, headers and paths over real HTTP ---------------------------------------


def test_names_outside_latin1_or_with_spaces_are_created_with_a_location(
    start_server: Callable[..., RestServer],
) -> None:
    url = start_server().url
    created = httpx.put(f"{url}/connectors/%E2%9C%93/config", json=C)
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/connectors/%E2%9C%93"
    assert httpx.get(url + created.headers["location"]).json()["name"] == "\u2713"
    posted = httpx.post(f"{url}/connectors", json={"name": "\u540d\u524d \u00e9", "config": C})
    assert posted.status_code == 201, posted.text
    assert posted.headers["location"] == "/connectors/%E5%90%8D%E5%89%8D%20%C3%A9"

    spaced = httpx.put(f"{url}/connectors/%20y%20/config", json=C)  # no answer at all before
    assert spaced.status_code == 201, spaced.text
    assert spaced.headers["location"] == "/connectors/y"
    assert spaced.json()["name"] == "y"
    assert httpx.get(f"{url}/connectors/y").status_code == 200
    assert sorted(httpx.get(f"{url}/connectors").json()) == sorted(
        ["\u2713", "\u540d\u524d \u00e9", "y"]
    )


def test_slash_head_and_media_type_answer_as_connect(
    start_server: Callable[..., RestServer],
) -> None:
    url = start_server().url
    slashed = httpx.get(f"{url}/connectors/", headers={"host": "evil.example"})
    assert slashed.status_code == 200  # not a redirect to http://evil.example/connectors
    assert slashed.json() == []
    head = httpx.head(f"{url}/connectors")
    assert head.status_code == 200
    assert head.content == b""
    assert httpx.head(f"{url}/connectors/missing").status_code == 404
    plain = httpx.put(
        f"{url}/connectors/p/config", content=json.dumps(C), headers={"content-type": "text/plain"}
    )
    assert_connect_error(plain, 415, "application/json")
    assert httpx.get(f"{url}/connectors").json() == []


def test_a_name_with_a_slash_is_refused_and_the_cli_deletes_any_name(
    client: TestClient,
    herder: Herder,
    bootstrap_servers: str,
    settings: WorkerSettings,
) -> None:
    refused = client.post("/connectors", json={"name": "a/b", "config": C})
    assert_connect_error(refused, 400, "must not contain '/'")
    for name in ("..", "."):
        assert client.post("/connectors", json={"name": name, "config": C}).status_code == 400
    leader = herder.configs.leader()  # as an older version (or a query) could have stored them
    unreachable = ["a/b", " y ", "-dash"]
    for name in unreachable:
        leader.put_connector_config(name, {**C, "name": name})
    leader.close()
    options = [
        "--bootstrap-servers",
        bootstrap_servers,
        "--group-id",
        settings.group_id,
        "--config-topic",
        settings.config_topic,
        "--status-topic",
        settings.status_topic,
    ]
    for name in unreachable:
        command = [
            sys.executable,
            "-m",
            "spark_eos_connect.apps.cli",
            "delete",
            *options,
            "--",
            name,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"name": name, "deleted": True}
    assert herder.connectors() == []
    command = [sys.executable, "-m", "spark_eos_connect.apps.cli", "delete", *options, "gone"]
    missing = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert missing.returncode == 1
    assert "Connector gone not found (HTTP 404)" in missing.stderr


# --- 5, 6: plugin classes and lone surrogates --------------------------------------------------


@pytest.fixture
def sentinel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module on sys.path that leaves a file ``imported`` when imported."""
    (tmp_path / f"{SENTINEL}.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('imported').touch()\nX = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "imported"
    sys.modules.pop(SENTINEL, None)


@pytest.mark.parametrize("name", ["../x", f"{SENTINEL}.X", "os.system", "a..b", "x.", " "])
def test_connector_class_never_imports_a_module_named_in_a_request(
    client: TestClient, sentinel: Path, name: str
) -> None:
    config = {"connector.class": name, "topic": "t"}
    assert_connect_error(client.put("/connectors/c/config", json=config), 400)
    assert_connect_error(client.post("/connectors", json={"name": "c", "config": config}), 400)
    validate = client.put(f"/connector-plugins/{quote(name, safe='')}/config/validate", json={})
    assert validate.status_code in (400, 404), validate.text  # 404: a name no path can hold
    assert validate.json()["error_code"] == validate.status_code
    assert not sentinel.exists()
    assert SENTINEL not in sys.modules
    assert client.get("/connectors").json() == []


def test_plugin_packages_lets_a_listed_package_in(
    kafka_config: dict[str, Any], settings: WorkerSettings
) -> None:
    counter = "spark_eos_connect.testing.CounterSourceConnector"
    path = f"/connector-plugins/{counter}/config/validate"
    for packages, status in (((), 400), (("spark_eos_connect.testing",), 200)):
        herder = Herder(kafka_config, dataclasses.replace(settings, plugin_packages=packages))
        try:
            response = TestClient(create_app(herder.start())).put(path, json={"topic": "t"})
        finally:
            herder.close()
        assert response.status_code == status, response.text
        if status == 400:
            assert_connect_error(response, 400, "plugin.packages")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/connector-plugins/Generator/config/validate", b'{"topic":"\\ud800"}'),
        ("PUT", "/connectors/s/config", b'{"connector.class":"Generator","topic":"\\udfff"}'),
        ("PUT", "/connectors/s/config", b'{"connector.class":"Generator","t\\ud800":"t"}'),
        ("POST", "/connectors", b'{"name":"\\ud800","config":{"connector.class":"Generator"}}'),
    ],
)
def test_lone_surrogates_are_400(client: TestClient, method: str, path: str, body: bytes) -> None:
    headers = {"content-type": "application/json"}
    response = client.request(method, path, content=body, headers=headers)
    assert_connect_error(response, 400, "lone surrogate")
    assert client.get("/connectors").json() == []


def test_lone_surrogates_in_offsets_are_400(client: TestClient) -> None:
    assert client.put("/connectors/s/config", json=C).status_code == 201
    assert client.put("/connectors/s/stop").status_code == 204
    body = b'{"offsets":[{"partition":{"generator":"\\ud800"},"offset":{"position":1}}]}'
    response = client.patch(
        "/connectors/s/offsets", content=body, headers={"content-type": "application/json"}
    )
    assert_connect_error(response, 400, "lone surrogate")
    assert client.get("/connectors/s/offsets").json() == {"offsets": []}


# --- 8: a PUT racing a DELETE ---------------------------------------------------------------------


def test_a_put_answers_what_it_wrote_even_when_a_delete_follows_at_once(
    herder: Herder, kafka_config: dict[str, Any], settings: WorkerSettings
) -> None:
    other = Herder(kafka_config, settings).start()  # another REST server on the same cluster
    write = herder.config_topic.write

    def write_then_deleted(action: Callable[..., Any]) -> Any:
        result = write(action)
        other.delete("raced")  # lands between the write and the answer
        return result

    herder.config_topic.write = write_then_deleted  # type: ignore[method-assign]
    try:
        client = TestClient(create_app(herder))
        created = client.put("/connectors/raced/config", json=C)
        assert created.status_code == 201, created.text
        answered = created.json()
        assert answered.pop("status")["state"] == "UNASSIGNED"  # no query runs it (issue 47)
        assert answered == {
            "name": "raced",
            "config": {**C, "name": "raced"},
            "tasks": [],
            "type": "source",
        }
        posted = client.post("/connectors", json={"name": "raced", "config": C})
        assert posted.status_code == 201, posted.text
        assert posted.json()["name"] == "raced"
    finally:
        herder.config_topic.write = write  # type: ignore[method-assign]
        other.close()
    assert herder.connectors() == []


# --- 7: memory and responsiveness under large bodies ----------------------------------------


def offsets_body(entries: int) -> bytes:
    """A PATCH body of `entries` source offsets (about 36 bytes each)."""
    items = (f'{{"partition":{{"p":{n}}},"offset":null}}' for n in range(entries))
    return b'{"offsets":[' + ",".join(items).encode() + b"]}"


def test_memory_stays_bounded_under_four_concurrent_10_mb_bodies(
    start_server: Callable[..., RestServer],
) -> None:
    server = start_server()
    url = server.url
    body = offsets_body(300_000)
    assert len(body) > 10 * 1_000_000
    for _ in range(3):  # warm up: the first requests import and allocate what every one needs
        assert httpx.get(f"{url}/connectors").status_code == 200
    before = rss_bytes(server.process.pid)

    def send(chunked: bool) -> httpx.Response:
        content: Any = (
            iter([body[i : i + MB] for i in range(0, len(body), MB)]) if chunked else body
        )
        with httpx.Client(timeout=120) as http:
            return http.patch(f"{url}/connectors/missing/offsets", content=content)

    with ThreadPoolExecutor(4) as pool:
        sent = [pool.submit(send, chunked) for chunked in (False, True, False, True)]
        meanwhile = httpx.get(f"{url}/connectors", timeout=60)
        responses = [future.result() for future in sent]
    after = rss_bytes(server.process.pid)
    print(f"server RSS before {before / MB:.1f} MiB, after 4 x 10 MB bodies {after / MB:.1f} MiB")
    assert meanwhile.status_code == 200
    for response in responses:
        assert_connect_error(response, 413, "rest.max.request.bytes")
    assert after - before < 100 * MB


# --- the fuzz run -----------------------------------------------------------------------------

NAME_PIECES = [
    "a",
    "\u2713",
    "\u00e9",
    " ",
    "/",
    "%",
    "?",
    "#",
    ".",
    "..",
    "\u540d",
    "\U0001f600",
    "\ufffd",
    "\x7f",
    "\t",
    "-",
    "_",
    "%2F",
    "\ud800",
]
CLASS_NAMES = [
    "Generator",
    "FileStreamSink",
    "../x",
    "this.X",
    "os.system",
    "a..b",
    "",
    " ",
    "builtins.object",
    "spark_eos_connect.testing.CounterSourceConnector",
    "spark_eos_connect.api.config.ConfigDef",
    "x" * 300,
    "\u2713.X",
    "\ud800.X",
]
NUMBERS = [
    0,
    1,
    -1,
    2**31 - 1,
    2**31,
    2**63 - 1,
    2**63,
    2**64,
    1.5,
    "7",
    "x",
    None,
    True,
    "9" * 40,
    [],
    {},
]
RAW_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000, "1" + "0" * 30]


class Fuzzer:
    """Requests of every class the issue names, drawn from a seeded generator."""

    def __init__(self, seed: int, sink: str, source: str, topic: str) -> None:
        self.random = random.Random(seed)
        self.sink, self.source, self.topic = sink, source, topic

    def name(self) -> str:
        return "".join(self.random.choice(NAME_PIECES) for _ in range(self.random.randint(1, 4)))

    def json(self, value: Any) -> bytes:
        return json.dumps(value).encode()  # ASCII: lone surrogates become \\ud800 escapes

    def names(self) -> dict[str, Any]:
        name = self.name()
        encoded = quote(name.encode("utf-8", "surrogatepass"), safe="")
        kind = self.random.randrange(4)
        if kind == 0:
            return {"method": "PUT", "path": f"/connectors/{encoded}/config", "body": self.json(C)}
        if kind == 1:
            body = self.json({"name": name, "config": C})
            return {"method": "POST", "path": "/connectors", "body": body}
        method = self.random.choice(["GET", "DELETE", "HEAD"])
        suffix = self.random.choice(["", "/status", "/config", "/tasks", "/offsets", "/"])
        return {"method": method, "path": f"/connectors/{encoded}{suffix}"}

    def classes(self) -> dict[str, Any]:
        name = self.random.choice(CLASS_NAMES)
        if self.random.random() < 0.5:
            encoded = quote(name.encode("utf-8", "surrogatepass"), safe="")
            path = f"/connector-plugins/{encoded}/config/validate"
            return {"method": "PUT", "path": path, "body": self.json({"topic": "t"})}
        body = self.json({"connector.class": name, "topic": "t", "topics": "t"})
        return {
            "method": "PUT",
            "path": f"/connectors/cls-{self.random.randrange(5)}/config",
            "body": body,
        }

    def offsets(self) -> dict[str, Any]:
        connector = self.random.choice([self.sink, self.source, "missing"])
        if connector == self.source:
            entry = {
                "partition": {"generator": connector, "task": self.random.choice(NUMBERS)},
                "offset": {"position": self.random.choice(NUMBERS)},
            }
        else:
            topic = self.random.choice([self.topic, "t", "a/b", "", "\u2713", "x" * 300])
            entry = {
                "partition": {"kafka_topic": topic, "kafka_partition": self.random.choice(NUMBERS)},
                "offset": {"kafka_offset": self.random.choice(NUMBERS)},
            }
        body = self.json({"offsets": [entry]})
        if self.random.random() < 0.3:
            body = body.replace(b"-1", self.random.choice(RAW_NUMBERS).encode(), 1)
        return {"method": "PATCH", "path": f"/connectors/{connector}/offsets", "body": body}

    def auth(self) -> dict[str, Any]:
        octets = [*range(0x21, 0x7F), *range(0x80, 0x100)]  # what an HTTP client may send
        raw = bytes(self.random.choice(octets) for _ in range(self.random.randrange(12)))
        header = self.random.choice(
            [
                b"Basic " + raw,
                raw,
                b"Basic \xc3\xa9",
                b"Basic",
                b"Bearer x",
                b"Basic " + b"YWRtaW46" + raw,
            ]
        )
        return {"method": "GET", "path": "/connectors", "authorization": header, "status": 401}

    def surrogates(self) -> dict[str, Any]:
        escape = f"\\u{self.random.randrange(0xD800, 0xE000):04x}".encode()
        template = self.random.choice(
            [
                b'{"connector.class":"Generator","topic":"S"}',
                b'{"connector.class":"Generator","S":"t"}',
                b'{"name":"S","config":{"connector.class":"Generator","topic":"t"}}',
                b'{"offsets":[{"partition":{"S":1},"offset":null}]}',
            ]
        )
        body = template.replace(b"S", escape)
        if body.startswith(b'{"name"'):
            return {"method": "POST", "path": "/connectors", "body": body}
        if body.startswith(b'{"offsets"'):
            return {"method": "PATCH", "path": f"/connectors/{self.source}/offsets", "body": body}
        path = self.random.choice(
            ["/connectors/sur/config", "/connector-plugins/Generator/config/validate"]
        )
        return {"method": "PUT", "path": path, "body": body}

    def bodies(self) -> dict[str, Any]:
        depth = self.random.choice([10, 5_000, 200_000])
        body = self.random.choice(
            [
                b"",
                b"{",
                b"[]",
                b"null",
                b'"x"',
                b"[" * depth + b"]" * depth,
                b"{" * depth,
                b'{"a":' * depth,
                b"\xff\xfe",
                b"x" * 5 * MB,
                self.json(C),
                b'{"a":"' + b"b" * 100_000 + b'"}',
            ]
        )
        content_type = self.random.choice(
            [
                b"application/json",
                b"text/plain",
                None,
                b"",
                b"application/json; charset=latin-1",
                b"multipart/form-data; boundary=x",
                b"application/x-www-form-urlencoded",
            ]
        )
        method, path = self.random.choice(
            [
                ("PUT", "/connectors/body/config"),
                ("POST", "/connectors"),
                ("PATCH", f"/connectors/{self.source}/offsets"),
                ("PUT", "/connector-plugins/Generator/config/validate"),
            ]
        )
        return {"method": method, "path": path, "body": body, "content_type": content_type}

    def paths(self) -> dict[str, Any]:
        path = self.random.choice(
            [
                "/connectors/",
                "/connectors//",
                "/",
                "/connector-plugins/",
                "/connectors/%ff/status",
                "/connectors/%00",
                "/connectors/%2F",
                "/connectors/x/tasks/-1/status",
                f"/connectors/{self.source}/tasks/99999999999999999999/status",
                "/connectors?expand=\u2713",
                "/connectors?expand=status",
                "/nowhere",
                "/connectors/x/restart?includeTasks=maybe",
            ]
        )
        method = self.random.choice(["GET", "HEAD", "OPTIONS", "TRACE", "POST", "DELETE"])
        host = self.random.choice([None, b"evil.example", b"\xff", b"a b"])
        return {"method": method, "path": path, "host": host}

    def request(self) -> dict[str, Any]:
        kinds = [
            self.names,
            self.classes,
            self.offsets,
            self.auth,
            self.surrogates,
            self.bodies,
            self.paths,
        ]
        return self.random.choice(kinds)()


def fuzz_call(url: str, spec: dict[str, Any]) -> tuple[dict[str, Any], httpx.Response]:
    """Send one fuzz request with valid credentials unless it is an auth case."""
    authorization = spec.get("authorization")
    if authorization is None:
        authorization = b"Basic " + base64.b64encode(":".join(AUTH).encode())
    headers = [(b"authorization", authorization.strip())]  # clients send no edge whitespace
    content_type = spec.get("content_type", b"application/json")
    if content_type is not None and spec.get("body") is not None:
        headers.append((b"content-type", content_type))
    if spec.get("host") is not None:
        headers.append((b"host", spec["host"]))
    with httpx.Client(timeout=120) as http:
        request = http.build_request(
            spec["method"], url + spec["path"], content=spec.get("body"), headers=headers
        )
        return spec, http.send(request)


def assert_answered_like_connect(spec: dict[str, Any], response: httpx.Response) -> None:
    shown = {k: (v[:80] if isinstance(v, bytes | str) else v) for k, v in spec.items()}
    assert response.status_code < 500, (shown, response.text[:500])
    if "status" in spec:
        assert response.status_code == spec["status"], (shown, response.text[:500])
    if spec["method"] == "HEAD" or response.status_code in (202, 204):
        return
    assert response.headers["content-type"] == "application/json", (shown, response.text[:500])
    body = response.json()
    if response.status_code >= 400:
        assert body["error_code"] == response.status_code, (shown, body)
        assert isinstance(body["message"], str) and body["message"], (shown, body)


def test_fuzz_run_answers_every_request_without_5xx(
    start_server: Callable[..., RestServer],
    topic_factory: Callable[..., str],
    tmp_path: Path,
) -> None:
    password_file = credentials_file(tmp_path)
    server = start_server(
        "--basic-auth-file",
        str(password_file),
        "--plugin-packages",
        "spark_eos_connect.testing",
        auth=AUTH,
    )
    url = server.url
    topic = topic_factory("fuzz", partitions=2)
    http = httpx.Client(auth=AUTH, timeout=60)
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / "o")}
    for name, config in (("fuzz-sink", sink), ("fuzz-source", C)):
        assert http.put(f"{url}/connectors/{name}/config", json=config).status_code == 201
        assert http.put(f"{url}/connectors/{name}/stop").status_code == 204
    fuzzer = Fuzzer(27, "fuzz-sink", "fuzz-source", topic)
    specs = [fuzzer.request() for _ in range(300)]
    with ThreadPoolExecutor(4) as pool:
        answered = list(pool.map(lambda spec: fuzz_call(url, spec), specs))
    for spec, response in answered:
        assert_answered_like_connect(spec, response)
    statuses = sorted({response.status_code for _, response in answered})
    print(f"fuzz: {len(answered)} requests, statuses {statuses}")
    assert {200, 201, 400, 401, 404, 413, 415} <= set(statuses)
    assert http.get(f"{url}/connectors/fuzz-sink").status_code == 200
    http.close()
    assert "Traceback" not in server.log()
