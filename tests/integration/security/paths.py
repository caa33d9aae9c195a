"""One deployment's names and topics on the secured broker, and each path of `acl_table.PATHS`
run as a principal: returning None when it ran through, else the error it failed with.

A path's run is the same whether the principal holds every row it needs or lacks one;
`assert_succeeded` checks what a full run leaves behind, `assert_nothing_committed` that a
refused run left nothing (for REST/CLI: that the refused operation changed nothing).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AclBinding, AclOperation, ResourcePatternType, ResourceType

from spark_eos_connect.connectors.generator import expected_records
from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.testing import wait_for

from .acl_table import ADMIN, DELTA, SINK, SOURCE, Grant, Pipeline
from .conftest import Principal, allow

RECORDS = 120
SEED = 7
FAIL_WITHIN_S = 120  # a run that has not failed by then is taken as running on
OPERATIONS = {
    "Read": AclOperation.READ,
    "Write": AclOperation.WRITE,
    "Describe": AclOperation.DESCRIBE,
    "Delete": AclOperation.DELETE,
    "IdempotentWrite": AclOperation.IDEMPOTENT_WRITE,
}
RESOURCES = {
    "Topic": ResourceType.TOPIC,
    "TransactionalId": ResourceType.TRANSACTIONAL_ID,
    "Cluster": ResourceType.BROKER,
    "Group": ResourceType.GROUP,
}
COMPACTED = {"cleanup.policy": "compact"}
SINK_VALUES = [f"s{n}" for n in range(6)]
"""The sink topic's committed records (two partitions, alternating), read by sink and Delta."""
ABORTED_VALUES = ["never-1", "never-2"]
SOURCE_OFFSETS_BODY = {
    "offsets": [{"partition": {"generator": "acl", "task": 0}, "offset": {"position": 42}}]
}


def acl_bindings(user: str, granted: Iterable[Grant]) -> list[AclBinding]:
    """`granted` as ALLOW bindings for `user`."""
    return [
        allow(
            user,
            OPERATIONS[g.operation],
            RESOURCES[g.resource],
            g.name,
            ResourcePatternType.PREFIXED if g.prefixed else ResourcePatternType.LITERAL,
        )
        for g in sorted(granted, key=lambda g: (g.resource, g.name, g.operation))
    ]


def principal_with(
    broker: LocalKafkaBroker, make: Callable[[str], Principal], granted: set[Grant]
) -> Principal:
    """A new principal granted `granted`."""
    principal = make("pipeline")
    broker.create_acls(acl_bindings(principal.user, granted))
    return principal


def kafka_options(principal: Principal) -> dict[str, str]:
    """The principal's client settings as `kafka.` options."""
    return {f"kafka.{k}": v for k, v in principal.config.items()}


@dataclass(frozen=True)
class Deployment:
    """One deployment's names, its topics created up front by the super user (the principal
    may not create topics: the README says so)."""

    pipeline: Pipeline
    topic: str
    config_topic: str
    offsets_topic: str
    status_topic: str
    dedicated_offsets_topic: str | None
    sink_topic: str

    @property
    def connector(self) -> str:
        """The source connector."""
        return self.pipeline.connectors[0]

    @property
    def sink_connector(self) -> str:
        """The sink connector (the Delta query's name too)."""
        return self.pipeline.sink_connectors[0]

    def worker_options(self) -> dict[str, str]:
        """`group.id` and the internal topics."""
        return {
            "group.id": self.pipeline.group_id,
            "config.storage.topic": self.config_topic,
            "offset.storage.topic": self.offsets_topic,
            "status.storage.topic": self.status_topic,
        }

    def source_options(self) -> dict[str, str]:
        """Reader options of the Generator query (without the Kafka client settings)."""
        options = {
            "name": self.connector,
            "connector.class": "Generator",
            "topic": self.topic,
            "seed": str(SEED),
            "max.records": str(RECORDS),
            "records.per.poll": "40",
            "maxPollDurationMs": "500",
            **self.worker_options(),
        }
        if self.dedicated_offsets_topic:
            options["offsets.storage.topic"] = self.dedicated_offsets_topic
        return options

    def sink_options(self, out: Path) -> dict[str, str]:
        """Options of the FileStreamSink query reading the sink topic into `out`."""
        return {
            "name": self.sink_connector,
            "connector.class": "FileStreamSink",
            "topics": self.sink_topic,
            "file": str(out),
            **self.worker_options(),
        }

    def delta_options(self, table: Path) -> dict[str, str]:
        """Options of the Delta query reading the sink topic into `table`."""
        return {"name": self.sink_connector, "topics": self.sink_topic, "path": str(table)}


def make_deployment(broker: LocalKafkaBroker, dedicated_offsets: bool = False) -> Deployment:
    """Fresh names and topics; the sink topic holds `SINK_VALUES` (and an aborted transaction)."""
    tag = uuid.uuid4().hex[:8]
    names = [f"{kind}-{tag}" for kind in ("data", "configs", "offsets", "status", "sinkin")]
    dedicated = f"connector-offsets-{tag}" if dedicated_offsets else None
    admin = admin_client(broker.client_config())
    ensure_topic(admin, names[0], partitions=1)
    ensure_topic(admin, names[1], partitions=1, config=COMPACTED)
    for topic in [names[2], names[3], *([dedicated] if dedicated else [])]:
        ensure_topic(admin, topic, partitions=3, config=COMPACTED)
    ensure_topic(admin, names[4], partitions=2)
    _produce_sink_records(broker, names[4])
    internal = (*names[1:4], *([dedicated] if dedicated else []))
    pipeline = Pipeline(
        f"group-{tag}",
        (f"acl-{tag}",),
        (names[0],),
        internal,
        sink_topics=(names[4],),
        sink_connectors=(f"acl-sink-{tag}",),
    )
    data, configs, offsets, status, sink = names
    return Deployment(pipeline, data, configs, offsets, status, dedicated, sink)


def _produce_sink_records(broker: LocalKafkaBroker, topic: str) -> None:
    producer = Producer({**broker.client_config(), "transactional.id": f"seed-{topic}"})
    producer.init_transactions(30)
    batches = [(SINK_VALUES[:4], True), (ABORTED_VALUES, False), (SINK_VALUES[4:], True)]
    for values, commit in batches:
        producer.begin_transaction()
        for n, value in enumerate(values):
            producer.produce(topic, value.encode(), partition=n % 2)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)


def committed(broker: LocalKafkaBroker, topic: str) -> list[tuple[str, bytes]]:
    """(key, value) of the committed records of `topic`, read as the super user."""
    records = read_to_end(broker.client_config(), [topic], timeout_s=30)
    return [((r.key or b"").decode(), r.value or b"") for r in records]


def group_offsets(broker: LocalKafkaBroker, connector: str) -> dict[tuple[str, int], int]:
    """The committed offsets of `connect-<connector>`, read as the super user."""
    groups = KafkaGroupOffsets(broker.client_config())
    return dict(groups.committed(f"connect-{connector}").items())


def sink_topic_ends(deployment: Deployment) -> dict[tuple[str, int], int]:
    """The offset after each sink-topic partition's last record, as Connect commits it: both
    partitions hold two records, a commit marker, an aborted record, an abort marker, a record
    (offset 5) and a commit marker."""
    return {(deployment.sink_topic, 0): 6, (deployment.sink_topic, 1): 6}


@dataclass
class Context:
    """What a run needs besides the deployment and the principal."""

    spark: Any
    broker: LocalKafkaBroker
    work: Path


class PathRun:
    """One path of `acl_table.PATHS` run as a principal."""

    path: str

    def prepare(self, context: Context, deployment: Deployment) -> None:
        """The super user's part before the principal's run (nothing by default)."""

    def run(self, context: Context, deployment: Deployment, principal: Principal) -> str | None:
        """Run as `principal`: None when the run went through, else its error message."""
        raise NotImplementedError

    def assert_succeeded(self, context: Context, deployment: Deployment) -> None:
        """What a run that went through leaves behind."""
        raise NotImplementedError

    def assert_nothing_committed(self, context: Context, deployment: Deployment) -> None:
        """What a refused run leaves behind: nothing."""
        raise NotImplementedError


def start_source_query(
    spark: Any, deployment: Deployment, kafka: dict[str, str], work: Path
) -> Any:
    """The Generator source query into `deployment.topic`, as the principal in `kafka`."""
    options = {**deployment.source_options(), **kafka}
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return (
        stream.writeStream.format("eosconnect")
        .options(name=deployment.connector, **kafka)
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


class SourceRun(PathRun):
    """The exactly-once source pipeline: a Generator query of `RECORDS` records into a topic."""

    path = SOURCE

    def run(self, context: Context, deployment: Deployment, principal: Principal) -> str | None:
        broker = context.broker
        query = start_source_query(
            context.spark, deployment, kafka_options(principal), context.work
        )
        try:
            wait_for(
                lambda: not query.isActive or len(committed(broker, deployment.topic)) >= RECORDS,
                FAIL_WITHIN_S,
                f"{RECORDS} committed records or the query's failure",
            )
            return None if query.isActive else str(query.exception())
        finally:
            query.stop()

    def assert_succeeded(self, context: Context, deployment: Deployment) -> None:
        records = committed(context.broker, deployment.topic)
        assert records == expected_records(SEED, 0, 0, RECORDS)

    def assert_nothing_committed(self, context: Context, deployment: Deployment) -> None:
        for topic in [deployment.topic, deployment.offsets_topic]:
            assert committed(context.broker, topic) == [], topic


def run_available_now(writer: Any, checkpoint: Path) -> str | None:
    """Start `writer` with Trigger.AvailableNow; None when it finished, else its error."""
    from pyspark.errors import StreamingQueryException

    query = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    try:
        with contextlib.suppress(StreamingQueryException):
            query.awaitTermination(FAIL_WITHIN_S)
        assert not query.isActive, f"the query ran on for {FAIL_WITHIN_S}s"
        error = query.exception()
        return None if error is None else str(error)
    finally:
        query.stop()


class SinkRun(PathRun):
    """A Kafka → sink connector query: FileStreamSink registered by the reader (`connector.class`),
    the sink topic's committed records into a file, offsets committed to `connect-<name>`."""

    path = SINK

    def run(self, context: Context, deployment: Deployment, principal: Principal) -> str | None:
        options = {**deployment.sink_options(context.work / "out.txt"), **kafka_options(principal)}
        stream = context.spark.readStream.format("eosconnect").options(**options).load()
        writer = stream.writeStream.format("eosconnect").options(**options)
        return run_available_now(writer, context.work / "sink-checkpoint")

    def assert_succeeded(self, context: Context, deployment: Deployment) -> None:
        lines = (context.work / "out.txt").read_text().splitlines()
        assert sorted(lines) == SINK_VALUES
        assert group_offsets(context.broker, deployment.sink_connector) == sink_topic_ends(
            deployment
        )

    def assert_nothing_committed(self, context: Context, deployment: Deployment) -> None:
        out = context.work / "out.txt"
        assert not out.exists() or out.read_text() == ""
        assert group_offsets(context.broker, deployment.sink_connector) == {}


class DeltaRun(PathRun):
    """A Kafka → Delta query (`delta_sink`): the sink topic's committed records into a table."""

    path = DELTA

    def run(self, context: Context, deployment: Deployment, principal: Principal) -> str | None:
        from spark_eos_connect.delta import delta_sink

        options = {**deployment.delta_options(self.table(context)), **kafka_options(principal)}
        options.update(deployment.worker_options())
        stream = context.spark.readStream.format("eosconnect").options(**options).load()
        writer = stream.writeStream.foreachBatch(delta_sink(options))
        return run_available_now(writer, context.work / "delta-checkpoint")

    @staticmethod
    def table(context: Context) -> Path:
        return context.work / "table"

    def assert_succeeded(self, context: Context, deployment: Deployment) -> None:
        rows = context.spark.read.format("delta").load(str(self.table(context))).collect()
        assert sorted(r.value.decode() for r in rows) == SINK_VALUES

    def assert_nothing_committed(self, context: Context, deployment: Deployment) -> None:
        assert not (self.table(context) / "_delta_log").exists()
        assert group_offsets(context.broker, deployment.sink_connector) == {}


@dataclass
class AdminRun(PathRun):
    """The REST API's and CLI's work (both go through the herder): stop a source and a sink
    connector, then get, alter and reset their offsets (KIP-875). The super user creates both
    connectors first. After a refusal, the offsets are as they were before the refused step."""

    path = ADMIN
    expected: dict[str, Any] = field(default_factory=dict)

    def prepare(self, context: Context, deployment: Deployment) -> None:
        from spark_eos_connect.herder import Herder

        herder = Herder(context.broker.client_config(), settings(deployment)).start()
        try:
            herder.create(deployment.connector, source_config(deployment))
            herder.create(deployment.sink_connector, sink_config(deployment))
        finally:
            herder.close()

    def run(self, context: Context, deployment: Deployment, principal: Principal) -> str | None:
        from spark_eos_connect.herder import Herder

        self.expected = {"source": [], "sink": []}
        try:
            herder = Herder(principal.config, settings(deployment)).start()
        except Exception as error:
            return f"starting the herder: {type(error).__name__}: {error}"
        try:
            for step in admin_steps(deployment):
                try:
                    result = step.action(herder)
                except Exception as error:  # what the REST API answers 500 with, the CLI prints
                    return f"{step.name}: {type(error).__name__}: {error}"
                if step.shows:
                    assert canonical(result["offsets"]) == self.expected[step.kind], step.name
                if step.leaves is not None:
                    self.expected[step.kind] = canonical(step.leaves)
            return None
        finally:
            herder.close()

    def assert_succeeded(self, context: Context, deployment: Deployment) -> None:
        assert self.offsets_now(context, deployment) == {"source": [], "sink": []}

    def assert_nothing_committed(self, context: Context, deployment: Deployment) -> None:
        assert self.offsets_now(context, deployment) == self.expected

    @staticmethod
    def offsets_now(context: Context, deployment: Deployment) -> dict[str, Any]:
        """Both connectors' offsets, read as the super user."""
        from spark_eos_connect.herder import Herder

        herder = Herder(context.broker.client_config(), settings(deployment)).start()
        try:
            return {
                "source": canonical(herder.offsets(deployment.connector)["offsets"]),
                "sink": canonical(herder.offsets(deployment.sink_connector)["offsets"]),
            }
        finally:
            herder.close()


def canonical(offsets: list[Any]) -> list[Any]:
    """A REST offsets list in a stable order."""
    return sorted(offsets, key=lambda entry: json.dumps(entry, sort_keys=True))


def settings(deployment: Deployment) -> Any:
    """The herder's worker settings for `deployment`."""
    from spark_eos_connect.herder import WorkerSettings

    return WorkerSettings.from_options(deployment.worker_options())


def source_config(deployment: Deployment) -> dict[str, str]:
    """The source connector's config as the super user creates it."""
    return {"connector.class": "Generator", "topic": deployment.topic, "generator.id": "acl"}


def sink_config(deployment: Deployment) -> dict[str, str]:
    """The sink connector's config as the super user creates it."""
    return {"connector.class": "FileStreamSink", "topics": deployment.sink_topic}


def sink_offsets_body(deployment: Deployment) -> dict[str, Any]:
    """A PATCH body moving the sink connector to offset 3 of both partitions."""
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": deployment.sink_topic, "kafka_partition": p},
                "offset": {"kafka_offset": 3},
            }
            for p in (0, 1)
        ]
    }


@dataclass(frozen=True)
class AdminStep:
    """One herder call of the REST/CLI run."""

    name: str
    kind: str
    """"source" or "sink": whose offsets it shows or changes."""
    action: Callable[[Any], Any]
    shows: bool = False
    """It returns the offsets, which must be those expected so far."""
    leaves: list[Any] | None = None
    """The offsets after it, when it changes them."""


def admin_steps(deployment: Deployment) -> list[AdminStep]:
    """The herder calls of the REST/CLI run, in order."""
    source, sink = deployment.connector, deployment.sink_connector
    sink_body = sink_offsets_body(deployment)
    return [
        AdminStep(f"stop {source}", "source", lambda h: h.stop(source)),
        AdminStep(f"get offsets of {source}", "source", lambda h: h.offsets(source), shows=True),
        AdminStep(
            f"alter offsets of {source}",
            "source",
            lambda h: h.alter_offsets(source, SOURCE_OFFSETS_BODY),
            leaves=SOURCE_OFFSETS_BODY["offsets"],
        ),
        AdminStep(f"get offsets of {source}", "source", lambda h: h.offsets(source), shows=True),
        AdminStep(
            f"reset offsets of {source}", "source", lambda h: h.reset_offsets(source), leaves=[]
        ),
        AdminStep(f"stop {sink}", "sink", lambda h: h.stop(sink)),
        AdminStep(f"get offsets of {sink}", "sink", lambda h: h.offsets(sink), shows=True),
        AdminStep(
            f"alter offsets of {sink}",
            "sink",
            lambda h: h.alter_offsets(sink, sink_body),
            leaves=sink_body["offsets"],
        ),
        AdminStep(f"get offsets of {sink}", "sink", lambda h: h.offsets(sink), shows=True),
        AdminStep(f"reset offsets of {sink}", "sink", lambda h: h.reset_offsets(sink), leaves=[]),
    ]


RUNS: dict[str, Callable[[], PathRun]] = {
    SOURCE: SourceRun,
    SINK: SinkRun,
    DELTA: DeltaRun,
    ADMIN: AdminRun,
}
