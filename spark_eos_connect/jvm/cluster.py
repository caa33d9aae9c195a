"""A real Apache Kafka cluster of several KRaft nodes on this machine, each broker+controller.

`LocalKafkaCluster(brokers=3)` starts three nodes that form one controller quorum; topics the
brokers create themselves (consumer offsets, transaction state) and topics created with the
broker's default get replication factor 3 with a minimum of 2 in-sync replicas, as a small
production cluster has. Any node can be killed (SIGKILL, as a lost machine) and started again on
its ports and data, which is how tests take brokers away under running queries. Which node
leads what (a partition, the transaction coordinator, the controller quorum) is read from
the cluster itself.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.broker import (
    HOST,
    ClusterNode,
    LocalKafkaBroker,
    free_port,
    new_cluster_id,
)
from spark_eos_connect.kafka.clients import admin_client

TRANSACTION_STATE_TOPIC = "__transaction_state"
"""Kafka's transaction log; the local brokers give it one partition, so its leader is the one
transaction coordinator."""


class LocalKafkaCluster:
    """`brokers` local Kafka nodes forming one cluster; a context manager, or start()/close()."""

    def __init__(
        self,
        brokers: int = 3,
        data_dir: str | Path | None = None,
        heap: str = "384m",
        start_timeout_s: float = 120.0,
    ) -> None:
        if brokers < 1:
            raise SetupError(f"a cluster needs at least one broker, not {brokers}")
        self._owns_data_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="eosconnect-cluster-")).resolve()
        self.start_timeout_s = start_timeout_s
        controller_ports = [free_port() for _ in range(brokers)]
        voters = ",".join(f"{i + 1}@{HOST}:{port}" for i, port in enumerate(controller_ports))
        cluster_id = self._cluster_id()
        replication = min(3, brokers)
        self.nodes: dict[int, LocalKafkaBroker] = {
            i + 1: LocalKafkaBroker(
                data_dir=self.data_dir / f"node-{i + 1}",
                heap=heap,
                start_timeout_s=start_timeout_s,
                node=ClusterNode(i + 1, port, voters, cluster_id, replication),
            )
            for i, port in enumerate(controller_ports)
        }

    def _cluster_id(self) -> str:
        """The cluster's id, kept in the data folder so that a restart finds the same one."""
        path = self.data_dir / "cluster.id"
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(new_cluster_id())
        return path.read_text().strip()

    @property
    def bootstrap_servers(self) -> str:
        """Every node's listener, comma-separated, as clients are given them."""
        return ",".join(node.bootstrap_servers for node in self.nodes.values())

    def client_config(self) -> dict[str, str]:
        """librdkafka settings reaching the cluster."""
        return {"bootstrap.servers": self.bootstrap_servers}

    def start(self) -> LocalKafkaCluster:
        """Start every node, then wait until each answers and all brokers are registered."""
        for node in self.nodes.values():
            node.launch()
        for node in self.nodes.values():
            node.wait_until_ready()
        self.wait_for_brokers(len(self.nodes))
        return self

    def wait_for_brokers(self, count: int, timeout_s: float | None = None) -> None:
        """Return once the cluster's metadata lists `count` brokers."""
        admin = admin_client({**self.client_config(), "log_level": 0})
        deadline = time.monotonic() + (timeout_s or self.start_timeout_s)
        seen = 0
        while time.monotonic() < deadline:
            try:
                seen = len(admin.list_topics(timeout=2).brokers)
            except Exception:
                seen = 0
            if seen == count:
                return
            time.sleep(0.2)
        raise SetupError(f"the cluster listed {seen} of {count} brokers in time")

    def kill(self, node_id: int) -> None:
        """SIGKILL node `node_id`, as the loss of its machine would."""
        self.nodes[node_id].kill()

    def restart(self, node_id: int) -> None:
        """Start node `node_id` again on its ports and data; returns once it answers."""
        node = self.nodes[node_id]
        node.launch()
        node.wait_until_ready()

    def running(self) -> list[int]:
        """The ids of the nodes whose process is alive."""
        return [node_id for node_id, node in self.nodes.items() if node.is_running()]

    def partition_leader(self, topic: str, partition: int = 0, timeout_s: float = 30.0) -> int:
        """The node leading `topic`'s `partition` now."""
        admin = admin_client({**self.client_config(), "log_level": 0})
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            metadata = admin.list_topics(topic=topic, timeout=5).topics.get(topic)
            found = metadata.partitions.get(partition) if metadata and metadata.partitions else None
            if found is not None and found.leader in self.nodes:
                return int(found.leader)
            time.sleep(0.2)
        raise SetupError(f"no leader of {topic}[{partition}] within {timeout_s:g} s")

    def transaction_coordinator(self, timeout_s: float = 30.0) -> int:
        """The node coordinating transactions: the leader of the transaction log's only
        partition (it exists once a transactional producer has started)."""
        return self.partition_leader(TRANSACTION_STATE_TOPIC, 0, timeout_s)

    def active_controller(self) -> int:
        """The node leading the controller quorum: the leader named with the highest epoch in
        the running nodes' `quorum-state` files, which KRaft rewrites on every election."""
        best: tuple[int, int] | None = None
        for node_id in self.running():
            path = self.nodes[node_id].data_dir / "logs" / "__cluster_metadata-0" / "quorum-state"
            with contextlib.suppress(OSError, ValueError):
                state = json.loads(path.read_text())
                epoch, leader = int(state.get("leaderEpoch", -1)), int(state.get("leaderId", -1))
                if leader in self.nodes and (best is None or epoch > best[0]):
                    best = (epoch, leader)
        if best is None:
            raise SetupError("no running node names a controller quorum leader")
        return best[1]

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop every node at once (one by one, the last would wait for a quorum that has
        gone); a node that does not exit within `timeout_s` is killed."""
        with ThreadPoolExecutor(max_workers=len(self.nodes)) as pool:
            list(pool.map(lambda node: node.stop(timeout_s), self.nodes.values()))

    def close(self) -> None:
        """Stop every node and delete the data folder if this object created it."""
        self.stop()
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalKafkaCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
