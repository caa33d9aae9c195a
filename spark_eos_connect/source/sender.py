"""How a live source task hands its records to its producer (Kafka Connect's
`AbstractWorkerSourceTask.sendRecords`): as they are, or as the transform chain and the
converters make them; never to one of the framework's internal topics; the last source offset
of each source partition submitted; a dropped record's `commit_record` left to the delivery
guarantee.

The plain path is the hot one: records already bytes, no headers or partition, no
`commit_record` go to `produce` directly; anything else takes the general path. Records that
come converted in columns (`jvm_tasks.converted`: a Java task's, converted and transformed in
its JVM) go as they are, never through the `RecordPreparer`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from spark_eos_connect.api.source import SourceRecord
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords
from spark_eos_connect.kafka.producers import PRODUCER_ERRORS, ProducerClientError, produce
from spark_eos_connect.ports import TransactionalProducer
from spark_eos_connect.source.conversion import RecordPreparer, last_offsets
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.records import to_bytes
from spark_eos_connect.source.submitted import SubmittedOffsets


class InternalTopicError(EosConnectError):
    """A task produced a record to one of the framework's internal topics."""


def internal_topics(plan: SourceTaskPlan) -> frozenset[str]:
    """Topics a task must never write records to: the framework's own."""
    names = (plan.offsets_topic, plan.mirror_offsets_topic, plan.config_topic, plan.status_topic)
    return frozenset(name for name in names if name)


class RecordSender:
    """Sends the records of the task `plan` describes with `producer`.

    `submitted` gets the delivery reports of records whose task wants `commit_record`
    (`wants_record_callbacks`) and the source offsets handed over; `preparer` (None: records go
    as they are) converts and transforms them; `dropped` takes a record the chain dropped, for
    `commit_record`; `refused` names a record the producer refused at once (the producer's
    error, the record's topic).
    """

    def __init__(
        self,
        plan: SourceTaskPlan,
        producer: TransactionalProducer,
        submitted: SubmittedOffsets,
        preparer: RecordPreparer | None,
        wants_record_callbacks: bool,
        dropped: Callable[[SourceRecord], None],
        refused: Callable[[ProducerClientError, str], EosConnectError],
    ) -> None:
        self.plan = plan
        self.producer = producer
        self._submitted = submitted
        self._preparer = preparer
        self._callbacks = wants_record_callbacks
        self._dropped = dropped
        self._refused = refused
        self._forbidden = internal_topics(plan)
        self._allowed: set[str] = set()

    def send(self, records: list[SourceRecord] | ConvertedRecords) -> None:
        """Produce `records` and submit the last offset of each source partition; raises
        `InternalTopicError` or the refusal of a record the producer refused at once."""
        if isinstance(records, ConvertedRecords):
            self._send_converted(records)
            return
        if self._preparer is not None:
            self._send_prepared(records, self._preparer)
            return
        producer = self.producer
        produce_one = producer.produce
        allowed = self._allowed
        callbacks = self._callbacks
        last_seen: dict[int, int] = {}
        topic = ""
        try:
            for index, record in enumerate(records):
                topic = record.topic
                if topic not in allowed:
                    self._allow(topic)
                value = record.value
                if value is not None and value.__class__ is not bytes:
                    value = to_bytes(value)
                key = record.key
                if key is not None and key.__class__ is not bytes:
                    key = to_bytes(key)
                if record.source_partition is not None:
                    last_seen[id(record.source_partition)] = index
                if callbacks or record.partition is not None or record.headers or record.timestamp:
                    self._produce_with_extras(record, topic, value, key)
                    continue
                try:
                    produce_one(topic, value, key)
                except BufferError:
                    produce(producer, topic, value, key)
        except PRODUCER_ERRORS as error:
            raise self._refused(error, topic) from error
        submit = self._submitted.submit
        for index in sorted(last_seen.values()):
            record = records[index]
            assert record.source_partition is not None
            submit(record.source_partition, record.source_offset)
        producer.poll(0)

    def _send_prepared(self, records: list[SourceRecord], preparer: RecordPreparer) -> None:
        """Produce what the chain and converters make of `records`. A dropped record (filtered,
        or a tolerated failure) still moves its source offset, and goes to `dropped` for the
        task's `commit_record` (with no metadata), as Connect's worker tasks do."""
        producer = self.producer
        prepared = preparer.prepare(records)
        callbacks = self._callbacks
        delivered_record = self._submitted.delivered_record
        topic = ""
        try:
            for index, topic, partition, key, value, headers, timestamp in prepared.ready:
                if topic not in self._allowed:
                    self._allow(topic)
                extra: dict[str, Any] = {}
                if partition is not None:
                    extra["partition"] = partition
                if headers:
                    extra["headers"] = headers
                if timestamp:
                    extra["timestamp"] = timestamp
                if callbacks:
                    extra["on_delivery"] = functools.partial(delivered_record, records[index])
                produce(producer, topic, value, key, **extra)
        except PRODUCER_ERRORS as error:
            raise self._refused(error, topic) from error
        if callbacks:
            for index in prepared.dropped:
                self._dropped(records[index])
        for source_partition, offset in last_offsets(records):
            self._submitted.submit(source_partition, offset)
        producer.poll(0)

    def _send_converted(self, records: ConvertedRecords) -> None:
        """Produce records already converted to bytes, then submit the batch's offsets."""
        producer = self.producer
        for topic in set(records.topics) - self._allowed:
            self._allow(topic)
        topic = ""
        try:
            if records.plain:
                produce_one = producer.produce
                for topic, key, value in zip(
                    records.topics, records.keys, records.values, strict=True
                ):
                    try:
                        produce_one(topic, value, key)
                    except BufferError:
                        produce(producer, topic, value, key)
            else:
                delivered = self._submitted.delivered
                for index, (topic, key, value) in enumerate(
                    zip(records.topics, records.keys, records.values, strict=True)
                ):
                    produce(producer, topic, value, key, **records.extras(index, delivered))
        except PRODUCER_ERRORS as error:
            raise self._refused(error, topic) from error
        for source_partition, offset in records.offsets:
            self._submitted.submit(source_partition, offset)
        producer.poll(0)

    def _produce_with_extras(
        self, record: SourceRecord, topic: str, value: bytes | None, key: bytes | None
    ) -> None:
        extra: dict[str, Any] = {}
        if record.partition is not None:
            extra["partition"] = record.partition
        if record.headers:
            extra["headers"] = [(name, to_bytes(data)) for name, data in record.headers]
        if record.timestamp:
            extra["timestamp"] = record.timestamp
        if self._callbacks:
            extra["on_delivery"] = functools.partial(self._submitted.delivered_record, record)
        produce(self.producer, topic, value, key, **extra)

    def _allow(self, topic: str) -> None:
        if topic in self._forbidden:
            raise InternalTopicError(
                f"task {self.plan.task} of connector {self.plan.connector} produced a record to "
                f"{topic!r}, one of the framework's internal topics (offsets, config, status); "
                "source records must go to data topics, so the task fails and nothing of this "
                "transaction is committed"
            )
        self._allowed.add(topic)
