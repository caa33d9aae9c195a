"""`HerderStores`: what the herder reads and writes, behind the ports of `spark_eos_connect.ports`
(Kafka Connect's backing stores). `in_kafka` builds the Kafka ones; `storage.memory` has twins."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.herder.settings import WorkerSettings
from spark_eos_connect.kafka.clients import admin_client
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.ports import ConfigStore, GroupOffsets, SourceOffsetStore, StatusStore
from spark_eos_connect.storage.config_store import KafkaConfigStore
from spark_eos_connect.storage.offsets import KafkaSourceOffsets
from spark_eos_connect.storage.status_store import KafkaStatusStore


def _kafka_cluster_id(kafka: Mapping[str, Any]) -> Callable[[float], str | None]:
    def cluster_id(timeout_s: float) -> str | None:
        cluster: str | None = admin_client(kafka).list_topics(timeout=timeout_s).cluster_id
        return cluster

    return cluster_id


@dataclass
class HerderStores:
    """The config, status and source offsets topics, sink connectors' consumer groups, and the
    cluster's id (asked with a time limit, for ``GET /``)."""

    configs: ConfigStore
    statuses: StatusStore
    source_offsets: SourceOffsetStore
    groups: GroupOffsets
    cluster_id: Callable[[float], str | None]

    @classmethod
    def in_kafka(
        cls, kafka: Mapping[str, Any], settings: WorkerSettings, timeout_s: float = 30.0
    ) -> HerderStores:
        """The stores of the Kafka cluster reached through `kafka` (librdkafka settings); no
        I/O until used. The config store drops a ``transactional.id`` (with a warning)."""
        clients = {k: v for k, v in kafka.items() if k != "transactional.id"}
        return cls(
            configs=KafkaConfigStore(kafka, settings.config_topic, settings.group_id),
            statuses=KafkaStatusStore(clients, settings.status_topic),
            source_offsets=KafkaSourceOffsets(
                clients,
                settings.group_id,
                settings.offsets_partitions,
                settings.exactly_once,
                timeout_s,
                settings.topics.offsets_replication,
            ),
            groups=KafkaGroupOffsets(clients, timeout_s),
            cluster_id=_kafka_cluster_id(clients),
        )
