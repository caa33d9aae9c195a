"""A real single-node Apache Kafka broker (KRaft, combined broker+controller) run from local jars.

`LocalKafkaBroker` formats storage, starts `kafka.Kafka` in a child JVM, waits until the broker
answers a metadata request and stops it on exit. It can be stopped and started again on the same
ports and data folder, which is how tests restart the broker under a running pipeline. With
`security="sasl"` or `"sasl_ssl"` it authenticates clients and enforces ACLs (see
`spark_eos_connect.kafka.security`); `client_config()` gives the settings a client needs.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.jars import ensure_jars
from spark_eos_connect.jvm.processes import terminate
from spark_eos_connect.kafka import security as sec
from spark_eos_connect.kafka.clients import admin_client

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ClusterNode:
    """A node's place in a cluster of several: its id, its controller port, the quorum's
    voters (`id@host:port,...`), the cluster's id and its replication factor."""

    node_id: int
    controller_port: int
    voters: str
    cluster_id: str
    replication: int


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (Kafka's Uuid).

    Like Kafka's `Uuid.randomUuid`, never one starting with `-`: the storage tool would read it
    as an option."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not cluster_id.startswith("-"):
            return cluster_id


def broker_properties(
    port: int,
    controller_port: int,
    log_dir: Path,
    security: sec.BrokerSecurity | None = None,
    node_id: int = 1,
    voters: str | None = None,
    replication: int = 1,
) -> dict[str, str]:
    """Settings for a broker+controller node on which transactions work and groups start at
    once, secured as `security` says (PLAINTEXT when None).

    Alone (`voters` None) the node is a one-node cluster. In a cluster, `voters` lists every
    node's controller (`id@host:port,...`) and `replication` is the replication factor of the
    broker's own topics and of topics created with the default, with a minimum in-sync
    replica count of 2 (a write is acknowledged by two brokers, so one can be lost)."""
    quorum = (
        {"controller.quorum.voters": voters}
        if voters
        else {"controller.quorum.bootstrap.servers": f"{HOST}:{controller_port}"}
    )
    min_isr = str(min(2, replication))
    return {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        **sec.security_properties(security or sec.BrokerSecurity(), HOST, port, controller_port),
        "controller.listener.names": sec.CONTROLLER_LISTENER,
        **quorum,
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "default.replication.factor": str(replication),
        "min.insync.replicas": min_isr,
        "offsets.topic.replication.factor": str(replication),
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": str(replication),
        "transaction.state.log.min.isr": min_isr,
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": str(replication),
        "share.coordinator.state.topic.min.isr": min_isr,
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "true",
    }


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home, "bin", "java") if java_home else None
    if candidate is not None and candidate.exists():
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise SetupError("Java 17+ is needed to run the local Kafka broker; `java` is not on PATH")
    return found


class LocalKafkaBroker:
    """A local Kafka broker process; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        port: int | None = None,
        data_dir: str | Path | None = None,
        heap: str = "512m",
        start_timeout_s: float = 90.0,
        security: str = "none",
        node: ClusterNode | None = None,
    ) -> None:
        self.port = port or free_port()
        self.node = node
        self.controller_port = node.controller_port if node else free_port()
        self._owns_data_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="eosconnect-kafka-")).resolve()
        self.heap = heap
        self.start_timeout_s = start_timeout_s
        self.security = sec.BrokerSecurity(security)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """The `bootstrap.servers` value clients use to reach this broker."""
        return f"{HOST}:{self.port}"

    def client_config(
        self,
        username: str = sec.SUPER_USER,
        password: str | None = None,
        mechanism: str = sec.SCRAM_MECHANISM,
    ) -> dict[str, str]:
        """librdkafka settings reaching this broker as `username` (the super user by default;
        only `bootstrap.servers` when security is none). Valid once started."""
        security = sec.client_security_config(self.security, username, password, mechanism)
        return {"bootstrap.servers": self.bootstrap_servers, **security}

    def kafka_options(
        self, username: str = sec.SUPER_USER, password: str | None = None
    ) -> dict[str, str]:
        """`client_config` as `kafka.`-prefixed Spark options."""
        return {f"kafka.{k}": v for k, v in self.client_config(username, password).items()}

    def create_user(self, username: str, password: str) -> None:
        """Give `username` SCRAM-SHA-512 credentials (needs security sasl or sasl_ssl)."""
        sec.create_scram_user(self.client_config(), username, password)

    def create_acls(self, bindings: Iterable[Any]) -> None:
        """Create confluent_kafka `AclBinding`s as the super user."""
        sec.create_acls(self.client_config(), bindings)

    def delete_acls(self, filters: Iterable[Any]) -> None:
        """Delete the ACLs matching confluent_kafka `AclBindingFilter`s as the super user."""
        sec.delete_acls(self.client_config(), filters)

    @property
    def log_path(self) -> Path:
        """Where the broker's own stdout/stderr go."""
        return self.data_dir / "broker.log"

    def _classpath(self) -> str:
        return str(ensure_jars("kafka") / "*")

    def _write_properties(self) -> Path:
        props_path = self.data_dir / "server.properties"
        node = self.node
        props = broker_properties(
            self.port,
            self.controller_port,
            self.data_dir / "logs",
            self.security,
            node_id=node.node_id if node else 1,
            voters=node.voters if node else None,
            replication=node.replication if node else 1,
        )
        props_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return props_path

    def _prepare_security(self) -> None:
        """Load (or make, on first start) the super user's password and the certificate."""
        mode = self.security.mode
        if mode == "none":
            return
        folder = self.data_dir / "security"
        folder.mkdir(parents=True, exist_ok=True)
        password_file = folder / "admin.password"
        if not password_file.exists():
            password_file.write_text(sec.new_password())
            password_file.chmod(0o600)
        password = password_file.read_text().strip()
        if mode == "sasl":
            self.security = sec.BrokerSecurity(mode, password)
            return
        keystore, pem = sec.make_broker_certificate(folder, password, HOST)
        self.security = sec.BrokerSecurity(mode, password, keystore, password, pem)

    def java_command(self, main_class: str, *args: str) -> list[str]:
        """A command running `main_class` of Kafka's jars with this broker's JVM settings."""
        log4j = resources.files("spark_eos_connect.jvm").joinpath("log4j2.properties")
        return [
            _java(),
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            self._classpath(),
            main_class,
            *args,
        ]

    def _format_storage(self, props_path: Path) -> None:
        if (self.data_dir / "logs" / "meta.properties").exists():
            return
        command = self.java_command(
            "kafka.tools.StorageTool",
            "format",
            "-c",
            str(props_path),
            "-t",
            self.node.cluster_id if self.node else new_cluster_id(),
            *([] if self.node else ["--standalone"]),
            *sec.scram_format_arguments(self.security),
        )
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SetupError(
                f"formatting Kafka storage in {self.data_dir} failed:\n"
                f"{result.stdout}{result.stderr}"
            )

    def start(self) -> LocalKafkaBroker:
        """Format storage if new, start the broker and wait until it answers requests."""
        if self.is_running():
            return self
        self.launch()
        self.wait_until_ready()
        return self

    def launch(self) -> None:
        """Format storage if new and start the broker process without waiting for it (the
        nodes of a cluster answer only once a majority of them runs)."""
        if self.is_running():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._prepare_security()
        props_path = self._write_properties()
        self._format_storage(props_path)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self.java_command("kafka.Kafka", str(props_path)),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_until_ready(self) -> None:
        """Return once the broker answers a metadata request naming a controller."""
        admin = admin_client({**self.client_config(), "log_level": 0})
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise SetupError(
                    f"the Kafka broker exited with code {self._process.returncode} during "
                    f"start-up; its log is {self.log_path}:\n{self._log_tail()}"
                )
            with contextlib.suppress(Exception):
                metadata = admin.list_topics(timeout=2)
                if metadata.brokers and metadata.controller_id >= 0:
                    return
        self.stop()
        raise SetupError(
            f"the Kafka broker did not answer within {self.start_timeout_s:.0f}s; "
            f"its log is {self.log_path}:\n{self._log_tail()}"
        )

    def _log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def is_running(self) -> bool:
        """Whether the broker process is alive."""
        return self._process is not None and self._process.poll() is None

    def stop(self, timeout_s: float = 60.0) -> None:
        """Shut the broker down cleanly (SIGTERM), killing it if it does not exit in time."""
        process, self._process = self._process, None
        if process is not None:
            terminate(process, timeout_s)

    def kill(self) -> None:
        """Kill the broker with SIGKILL, as a crash would."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the broker and delete its data folder if this object created it."""
        self.stop()
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalKafkaBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
