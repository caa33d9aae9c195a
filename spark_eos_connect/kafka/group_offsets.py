"""Committing a consumer group's offsets through a consumer that never joins the group.

Sink queries commit their offsets to `connect-<name>` after every micro-batch. The Admin API's
AlterConsumerGroupOffsets takes librdkafka's admin coordinator path, which aborts the whole
process when the coordinator's connection drops in the middle of a request (the assertion
`eonce->refcnt > 0` in `rd_kafka_enq_once_del_source_return`: a broker killed under a sink
query's commit took the query down with it). A consumer's OffsetCommit takes the consumer group
path instead, which waits for the group's new coordinator. As with the Admin API, a commit from
outside the group is refused while the group has members (UNKNOWN_MEMBER_ID).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.retry import call_with_retries

TP = tuple[str, int]
"""(topic, partition)."""

OutsiderFactory = Callable[[Mapping[str, Any], str], Any]
"""`(client settings, group) -> consumer` with `commit` and `close`."""


def outsider_consumer(kafka: Mapping[str, Any], group: str) -> Consumer:
    """A consumer of `group` that never subscribes: it only commits offsets."""
    return Consumer(
        {
            **with_client_defaults(kafka),
            "group.id": group,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
    )


def commit_group_offsets(
    kafka: Mapping[str, Any],
    group: str,
    offsets: Mapping[TP, int],
    timeout_s: float,
    outsider: OutsiderFactory = outsider_consumer,
) -> list[TopicPartition]:
    """Commit `offsets` to `group` and return the broker's answer per partition (a partition it
    refused has its `error` set). Retried while the group's coordinator moves or loads, up to
    `timeout_s`; a refusal of the whole request raises its `KafkaException`."""
    if not offsets:
        return []
    consumer = outsider(kafka, group)
    try:
        request = [TopicPartition(t, p, int(o)) for (t, p), o in sorted(offsets.items())]
        answer: list[TopicPartition] = call_with_retries(
            lambda _limit: consumer.commit(offsets=request, asynchronous=False),
            f"committing offsets to consumer group {group}",
            timeout_s,
        )
    finally:
        consumer.close()
    return answer
