"""Thin helpers over confluent-kafka: client configs, topics, and reading a topic to its end."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.errors import (
    KafkaAuthorizationError,
    is_retriable,
    is_topic_denied,
    is_topic_exists,
    is_unused_group_error,
    missing_acl,
    needs_new_metadata,
)
from spark_eos_connect.kafka.retry import KafkaTimeoutError, call_with_retries

KAFKA_OPTION_PREFIX = "kafka."


def kafka_client_config(options: Mapping[str, str]) -> dict[str, str]:
    """The `kafka.`-prefixed options with the prefix removed (Spark's convention)."""
    return {
        key[len(KAFKA_OPTION_PREFIX) :]: value
        for key, value in options.items()
        if key.startswith(KAFKA_OPTION_PREFIX)
    }


REACHABLE_TIMEOUT_S = 30.0
"""How long the driver waits for a first answer from `kafka.bootstrap.servers`."""


class KafkaUnreachableError(KafkaTimeoutError):
    """No broker of `kafka.bootstrap.servers` answered the driver's first metadata request."""


HANDSHAKE_BREAKS = ("security.protocol", "in state APIVERSION_QUERY", "in state SSL_HANDSHAKE")
"""How librdkafka says a broker closed the connection during the handshake: what a TLS or
SASL listener does with a PLAINTEXT client (and a PLAINTEXT one with a TLS client)."""


REFUSED_GRACE_S = 2.0
"""How long `ensure_reachable(..., fail_fast=True)` sees every bootstrap address refuse the
connection or fail to resolve before it gives up (a broker being restarted may refuse too)."""
REFUSALS = ("_TRANSPORT", "_RESOLVE")
"""librdkafka's errors for a refused connection and a host name that does not resolve."""


def refusal(errors: Iterable[Any]) -> str | None:
    """The last refusal or resolution failure when every bootstrap address is down for that
    reason (`_ALL_BROKERS_DOWN` reported, and refusals since); None otherwise."""
    down = False
    last = None
    for error in errors:
        name = error.name()
        if name == "_ALL_BROKERS_DOWN":
            down = True
        elif name in REFUSALS and ("refused" in error.str() or name == "_RESOLVE"):
            last = error.str()
        else:
            down, last = False, None
    return last if down else None


def ensure_reachable(
    config: Mapping[str, Any], timeout_s: float | None = None, fail_fast: bool = False
) -> None:
    """Return once a broker answers a metadata request; raise `KafkaUnreachableError` naming
    `kafka.bootstrap.servers` and the time waited otherwise (the driver's first call to Kafka,
    so that a wrong address is not reported as a bare librdkafka transport failure).

    A broker that drops the connection during the handshake, as a TLS or SASL listener does
    with a PLAINTEXT client, is reported at once with `kafka.security.protocol` named. With
    `fail_fast` (a check before a job starts), addresses that all refuse the connection or do
    not resolve for `REFUSED_GRACE_S` are reported then. The probe's own client logs nothing:
    what went wrong is in the error raised."""
    wait = REACHABLE_TIMEOUT_S if timeout_s is None else timeout_s
    started = time.monotonic()
    errors: list[KafkaError] = []
    logged = _CollectedLog()
    probe: dict[str, Any] = {**config, "error_cb": errors.append, "logger": logged.logger}
    admin = AdminClient(with_client_defaults(probe))
    deadline = started + wait
    while True:
        try:
            admin.list_topics(timeout=min(1.0, max(0.1, deadline - time.monotonic())))
            return
        except KafkaException as error:
            last = str(error.args[0].str() if error.args else error)
        admin.poll(0)
        said = [e.str() for e in errors] + logged.messages
        breaks = [text for text in said if any(sign in text for sign in HANDSHAKE_BREAKS)]
        # twice, so that a broker restarting is not taken for it
        mismatch = breaks[-1].rsplit("]: ", 1)[-1] if len(breaks) >= 2 else None
        if mismatch is not None:
            protocol = config.get("security.protocol", "PLAINTEXT")
            raise KafkaUnreachableError(
                f"kafka.bootstrap.servers={config.get('bootstrap.servers')}: the broker closed "
                f"the connection during the handshake ({mismatch}); check "
                f"kafka.security.protocol (the client uses {protocol}) against the listener's "
                "protocol (SSL, SASL_PLAINTEXT or SASL_SSL)"
            )
        refused = refusal(errors) if fail_fast else None
        if refused is not None and time.monotonic() - started >= REFUSED_GRACE_S:
            raise KafkaUnreachableError(
                f"kafka.bootstrap.servers={config.get('bootstrap.servers')}: "
                f"{refused.split(': ', 1)[-1]}; check the address and that the brokers are up"
            )
        if time.monotonic() >= deadline:
            detail = errors[-1].str() if errors else last
            raise KafkaUnreachableError(
                f"kafka.bootstrap.servers={config.get('bootstrap.servers')}: no broker answered "
                f"within {time.monotonic() - started:.0f} s ({detail}); check the address and "
                "that the brokers are up"
            )


class _CollectedLog(logging.Handler):
    """A librdkafka client's log lines, kept instead of printed (`logger` client setting)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []
        self.logger = logging.getLogger(f"{__name__}.probe.{id(self)}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


CONNECT_WAIT_S = 5.0
"""How long `connected` waits for its metadata answer before letting the client go on."""
Client = TypeVar("Client", Consumer, Producer)


def connected(client: Client, timeout_s: float = CONNECT_WAIT_S) -> Client:
    """`client` once it holds a broker connection and the cluster's metadata.

    A new librdkafka client that fetches, or asks for a producer id, before any broker is up
    waits for a retry timer: the first read of a fresh consumer, `init_transactions` of a
    fresh producer and the first delivery of an idempotent one took 0.5 s (sometimes 1 s)
    against a local broker, and 0.06-0.08 s after one metadata request. A client that cannot
    get it within `timeout_s` goes on, and its own request reports the failure."""
    with contextlib.suppress(KafkaException):
        client.list_topics(timeout=timeout_s)
    return client


def admin_client(config: Mapping[str, Any]) -> AdminClient:
    """An AdminClient for `config` (librdkafka names)."""
    return AdminClient(with_client_defaults(config))


BROKER_DEFAULT = -1
"""A replication factor (or partition count) of -1: the broker's default (KIP-464)."""


def ensure_topic(
    admin: AdminClient,
    name: str,
    partitions: int = 1,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    replication_factor: int = BROKER_DEFAULT,
) -> bool:
    """Create `name` unless it exists; returns whether it was created. The replication factor
    is the broker's default (`default.replication.factor`) unless given."""
    existing = _list_topics(admin, timeout_s)
    if name in existing and existing[name].error is None:
        return False
    topic = NewTopic(
        name,
        num_partitions=partitions,
        replication_factor=replication_factor,
        config=dict(config or {}),
    )

    def create(limit: float) -> None:
        futures = admin.create_topics([topic], operation_timeout=limit, request_timeout=limit)
        futures[name].result()

    try:
        call_with_retries(create, f"creating topic {name!r}", timeout_s)
    except KafkaException as error:
        if is_topic_denied(error):
            raise _topic_denied(name, error) from None
        if not is_topic_exists(error):
            raise
        return False
    _wait_for_topic(admin, name, timeout_s)
    return True


def topic_names(config: Mapping[str, Any], timeout_s: float = 10.0) -> set[str]:
    """The names of the cluster's topics (internal ones included) that exist without error."""
    topics = _list_topics(admin_client(config), timeout_s)
    return {name for name, meta in topics.items() if meta.error is None}


def _list_topics(admin: AdminClient, timeout_s: float, topic: str | None = None) -> dict[str, Any]:
    """The cluster's topics (or only `topic`), retried while brokers come and go."""

    def request(limit: float) -> dict[str, Any]:
        return dict(admin.list_topics(topic=topic, timeout=limit).topics)

    return call_with_retries(request, "asking the cluster for its topics", timeout_s)


def _topic_denied(name: str, error: KafkaException) -> KafkaAuthorizationError:
    """A topic the principal does not see (no Describe) and may not create either."""
    return KafkaAuthorizationError(
        f"Kafka denied creating topic {name!r}, which this principal does not see: it needs "
        f"Describe on Topic {name!r} (and Read or Write to use it) if the topic exists, else "
        f"Create on Topic {name!r} ({error.args[0]})"
    )


def _wait_for_topic(admin: AdminClient, name: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        topic = _list_topics(admin, timeout_s, name).get(name)
        if topic is not None and topic.error is None and topic.partitions:
            leaders = [p.leader for p in topic.partitions.values()]
            if all(leader >= 0 for leader in leaders):
                return
        time.sleep(0.05)
    raise KafkaTimeoutError(f"topic {name!r} had no leader after {timeout_s:.0f}s")


def partition_count(
    admin: AdminClient, topic: str, timeout_s: float = 30.0, wait_s: float = 0.0
) -> int:
    """How many partitions `topic` has; 0 when it does not exist.

    `wait_s` > 0 is for a topic known to exist (created a moment ago): on a cluster of several
    brokers the broker asked may not know it yet, so the question is asked again for up to
    `wait_s` before 0 is the answer."""
    deadline = time.monotonic() + wait_s
    while True:
        metadata = _list_topics(admin, timeout_s, topic).get(topic)
        if metadata is not None and metadata.error is None and metadata.partitions:
            return len(metadata.partitions)
        if time.monotonic() >= deadline:
            return 0
        time.sleep(0.1)


@dataclass(frozen=True)
class ConsumedRecord:
    """A record read back from Kafka, detached from librdkafka's message object."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def read_to_end(
    config: Mapping[str, Any],
    topics: Iterable[str],
    isolation_level: str = "read_committed",
    timeout_s: float = 60.0,
    start: Mapping[tuple[str, int], int] | None = None,
    wait_for_open_transactions: bool = False,
    partitions: Mapping[str, Iterable[int]] | None = None,
) -> list[ConsumedRecord]:
    """Every record of `topics` from the beginning (or `start`) to the end seen when called.

    With read_committed the end is the last stable offset, so transactions still open are not
    waited for, unless `wait_for_open_transactions`: then the end is the high watermark and the
    read waits (up to `timeout_s`) until every transaction before it is committed or aborted.
    `partitions` limits the read to some partitions of a topic.
    """
    topics = list(topics)
    high_watermarks = (
        _high_watermarks(config, topics, timeout_s) if wait_for_open_transactions else None
    )
    consumer = Consumer(
        {
            **with_client_defaults(config),
            "group.id": "eosconnect-reader-unused",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "isolation.level": isolation_level,
        }
    )
    try:
        assignment: list[TopicPartition] = []
        ends: dict[tuple[str, int], int] = {}
        for topic in topics:
            metadata = consumer.list_topics(topic=topic, timeout=timeout_s).topics[topic]
            if metadata.error is not None:
                raise EosConnectError(f"cannot read topic {topic!r}: {metadata.error}")
            wanted = set((partitions or {}).get(topic, metadata.partitions))
            for partition in metadata.partitions:
                if partition not in wanted:
                    continue
                tp = TopicPartition(topic, partition)
                low, high = watermarks(consumer, tp, timeout_s)
                if high_watermarks is not None:
                    high = high_watermarks.get((topic, partition), high)
                begin = (start or {}).get((topic, partition), OFFSET_BEGINNING)
                if high > max(low, begin if begin >= 0 else low):
                    ends[(topic, partition)] = high
                    assignment.append(TopicPartition(topic, partition, begin))
        return _consume_until(consumer, assignment, ends, timeout_s, config)
    finally:
        consumer.close()


def watermarks(consumer: Consumer, tp: TopicPartition, timeout_s: float) -> tuple[int, int]:
    """(low, high) watermarks, retrying while leadership moves (e.g. after a broker restart)."""

    def request(limit: float) -> tuple[int, int]:
        low, high = consumer.get_watermark_offsets(tp, timeout=limit, cached=False)
        return int(low), int(high)

    return call_with_retries(request, f"watermarks of {tp.topic}[{tp.partition}]", timeout_s)


OFFSETS_REQUEST_TIMEOUT_S = 2.0
"""Time limit of one ListOffsets attempt: a request queued for a leader just lost waits out its
whole limit, so a short one lets the retry reach the new leader soon after its election."""


def listed_offsets(
    admin: AdminClient,
    requests: Mapping[TopicPartition, OffsetSpec],
    isolation: IsolationLevel,
    limit: float,
) -> dict[tuple[str, int], int]:
    """One ListOffsets request's answer as `{(topic, partition): offset}`.

    For a partition whose leader was just lost the answer may be no offset at all (librdkafka's
    -1001, no exception): read as an end, it would say the partition has nothing new, and a
    stream would think itself idle or a reader at the end. That answer is raised as the
    retriable LEADER_NOT_AVAILABLE, for `call_with_retries` to ask again (with fresh metadata).
    """
    futures = admin.list_offsets(dict(requests), isolation_level=isolation, request_timeout=limit)
    offsets = {(tp.topic, tp.partition): future.result().offset for tp, future in futures.items()}
    missing = sorted(tp for tp, offset in offsets.items() if offset < 0)
    if missing:
        raise KafkaException(
            KafkaError(KafkaError.LEADER_NOT_AVAILABLE, f"no offset listed for {missing}")
        )
    return offsets


def _high_watermarks(
    config: Mapping[str, Any], topics: Iterable[str], timeout_s: float
) -> dict[tuple[str, int], int]:
    """High watermarks (past open transactions), as a read_uncommitted consumer sees them."""
    consumer = Consumer(
        {
            **with_client_defaults(config),
            "group.id": "eosconnect-watermarks",
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        marks: dict[tuple[str, int], int] = {}
        for topic in topics:
            metadata = consumer.list_topics(topic=topic, timeout=timeout_s).topics[topic]
            for partition in metadata.partitions:
                tp = TopicPartition(topic, partition)
                marks[(topic, partition)] = watermarks(consumer, tp, timeout_s)[1]
        return marks
    finally:
        consumer.close()


NEXT_RECORD_WAIT_S = 0.02
"""How long one round of reading to the end waits for a record."""


def next_records(consumer: Consumer, max_records: int, wait_s: float) -> list[Message]:
    """Up to `max_records` the consumer has, waiting at most `wait_s` for the first one only:
    `consume(n, timeout)` waits the whole timeout whenever fewer than n records come."""
    first = consumer.poll(wait_s)
    if first is None or max_records <= 1:
        return [] if first is None else [first]
    return [first, *consumer.consume(num_messages=max_records - 1, timeout=0)]


def _consume_until(
    consumer: Consumer,
    assignment: list[TopicPartition],
    ends: dict[tuple[str, int], int],
    timeout_s: float,
    config: Mapping[str, Any],
) -> list[ConsumedRecord]:
    records: list[ConsumedRecord] = []
    if not assignment:
        return records
    consumer.assign(assignment)
    pending = dict(ends)
    deadline = time.monotonic() + timeout_s
    while pending:
        if time.monotonic() > deadline:
            raise KafkaTimeoutError(
                f"reading to the end timed out after {timeout_s:.0f}s; still behind on "
                f"{sorted(pending)}"
            )
        for message in next_records(consumer, 10_000, NEXT_RECORD_WAIT_S):
            error = message.error()
            if error is not None:
                if is_unused_group_error(error):
                    continue
                raise _consume_failed(config, message.topic(), error)
            records.append(_detach(message))
        positions = consumer.position(
            [TopicPartition(topic, partition) for topic, partition in pending]
        )
        for tp in positions:
            if tp.offset >= pending[(tp.topic, tp.partition)]:
                del pending[(tp.topic, tp.partition)]
    return records


def _consume_failed(
    config: Mapping[str, Any], topic: str | None, error: KafkaError
) -> EosConnectError:
    """The error to raise for a failed fetch of `topic`: a missing ACL is named."""
    denied = missing_acl(error, "Read and Describe", topic or "?", config)
    return denied or EosConnectError(f"consume failed: {error}")


def _detach(message: Any) -> ConsumedRecord:
    headers = tuple((name, value) for name, value in (message.headers() or []))
    return ConsumedRecord(
        topic=message.topic(),
        partition=message.partition(),
        offset=message.offset(),
        key=message.key(),
        value=message.value(),
        headers=headers,
        timestamp=message.timestamp()[1],
    )


class TopicTail:
    """Reads a topic's new records again and again with one long-lived consumer.

    Each `read_new` asks for every partition's end in one request (the high watermark when
    waiting for open transactions, else the last stable offset) and consumes from where the
    previous call stopped, read_committed: far cheaper per call than `read_to_end`, which
    builds its clients anew. Not thread-safe.
    """

    def __init__(self, config: Mapping[str, Any], topic: str) -> None:
        self.config = dict(config)
        self.topic = topic
        self.positions: dict[int, int] = {}
        self._admin = AdminClient(with_client_defaults(self.config))
        self._consumer: Consumer | None = None

    def _ends(self, wait_for_open_transactions: bool, timeout_s: float) -> dict[int, int]:
        isolation = (
            IsolationLevel.READ_UNCOMMITTED
            if wait_for_open_transactions
            else IsolationLevel.READ_COMMITTED
        )

        def request(limit: float) -> dict[int, int]:
            topics = self._admin.list_topics(topic=self.topic, timeout=limit).topics
            metadata = topics[self.topic]
            if metadata.error is not None:
                if is_retriable(metadata.error):
                    raise KafkaException(metadata.error)
                raise EosConnectError(f"cannot read topic {self.topic!r}: {metadata.error}")
            requests = {
                TopicPartition(self.topic, p): OffsetSpec.latest() for p in metadata.partitions
            }
            offsets = listed_offsets(self._admin, requests, isolation, limit)
            return {partition: offset for (_, partition), offset in offsets.items()}

        return call_with_retries(
            request,
            f"finding the end of topic {self.topic!r}",
            timeout_s,
            OFFSETS_REQUEST_TIMEOUT_S,
            before_retry=self._renew_if_stale,
        )

    def _renew_if_stale(self, error: KafkaError | None) -> None:
        """A new admin client, with fresh metadata, when `error` says the cached is old."""
        if needs_new_metadata(error):
            self._admin = AdminClient(with_client_defaults(self.config))

    def read_new(
        self,
        timeout_s: float = 60.0,
        wait_for_open_transactions: bool = True,
        partitions: Iterable[int] | None = None,
    ) -> list[ConsumedRecord]:
        """Records written since the last call (all of them on the first), up to the end."""
        ends = self._ends(wait_for_open_transactions, timeout_s)
        wanted = set(ends) if partitions is None else set(partitions) & set(ends)
        pending = {p: ends[p] for p in wanted if ends[p] > self.positions.get(p, 0)}
        if not pending:
            return []
        if self._consumer is None:
            self._consumer = connected(
                Consumer(
                    {
                        **with_client_defaults(self.config),
                        "group.id": "eosconnect-reader-unused",
                        "enable.auto.commit": False,
                        "enable.partition.eof": False,
                        "isolation.level": "read_committed",
                    }
                )
            )
        assignment = [
            TopicPartition(self.topic, p, self.positions.get(p, OFFSET_BEGINNING)) for p in pending
        ]
        records = _consume_until(
            self._consumer,
            assignment,
            {(self.topic, p): end for p, end in pending.items()},
            timeout_s,
            self.config,
        )
        self._consumer.unassign()
        for record in records:
            self.positions[record.partition] = record.offset + 1
        for partition, end in pending.items():
            self.positions[partition] = max(self.positions.get(partition, 0), end)
        return records

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
