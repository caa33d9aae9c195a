"""README.md's ACL table, proven against a SASL_SSL broker that enforces ACLs.

A principal granted exactly the table runs the exactly-once source pipeline (a Generator query
into a topic, with the global offsets topic and with a dedicated one), and so does one granted
only the rows the pipeline needs (`SOURCE_ROWS`); then, row by row, the same run without one of
those rows fails early, naming the missing permission and resource, and commits nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AclBinding, AclOperation, ResourcePatternType, ResourceType

from spark_eos_connect.connectors.generator import expected_records
from spark_eos_connect.kafka.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.testing import wait_for

from .acl_table import ACL_ROWS, SOURCE_ROWS, AclRow, Grant, Pipeline, grants, grants_without
from .conftest import SECURITY_MARKS, Principal, allow

pytestmark = SECURITY_MARKS

RECORDS = 120
SEED = 7
FAIL_WITHIN_S = 120  # a run that has not failed by then is taken as running on
OPERATIONS = {
    "Read": AclOperation.READ,
    "Write": AclOperation.WRITE,
    "Describe": AclOperation.DESCRIBE,
    "IdempotentWrite": AclOperation.IDEMPOTENT_WRITE,
}
RESOURCES = {
    "Topic": ResourceType.TOPIC,
    "TransactionalId": ResourceType.TRANSACTIONAL_ID,
    "Cluster": ResourceType.BROKER,
    "Group": ResourceType.GROUP,
}
COMPACTED = {"cleanup.policy": "compact"}


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


@dataclass(frozen=True)
class Deployment:
    """One source pipeline's names, its topics created up front by the super user."""

    pipeline: Pipeline
    topic: str
    config_topic: str
    offsets_topic: str
    status_topic: str
    dedicated_offsets_topic: str | None

    @property
    def connector(self) -> str:
        return self.pipeline.connectors[0]

    def options(self) -> dict[str, str]:
        """Reader options of the Generator query (without the Kafka client settings)."""
        options = {
            "name": self.connector,
            "connector.class": "Generator",
            "topic": self.topic,
            "seed": str(SEED),
            "max.records": str(RECORDS),
            "records.per.poll": "40",
            "maxPollDurationMs": "500",
            "group.id": self.pipeline.group_id,
            "config.storage.topic": self.config_topic,
            "offset.storage.topic": self.offsets_topic,
            "status.storage.topic": self.status_topic,
        }
        if self.dedicated_offsets_topic:
            options["offsets.storage.topic"] = self.dedicated_offsets_topic
        return options


def make_deployment(broker: LocalKafkaBroker, dedicated_offsets: bool) -> Deployment:
    """Fresh names and topics (the principal may not create topics: the README says so)."""
    tag = uuid.uuid4().hex[:8]
    names = [f"{kind}-{tag}" for kind in ("data", "configs", "offsets", "status")]
    dedicated = f"connector-offsets-{tag}" if dedicated_offsets else None
    admin = admin_client(broker.client_config())
    ensure_topic(admin, names[0], partitions=1)
    ensure_topic(admin, names[1], partitions=1, config=COMPACTED)
    for topic in [names[2], names[3], *([dedicated] if dedicated else [])]:
        ensure_topic(admin, topic, partitions=3, config=COMPACTED)
    internal = (*names[1:], *([dedicated] if dedicated else []))
    pipeline = Pipeline(f"group-{tag}", (f"acl-{tag}",), (names[0],), internal)
    return Deployment(pipeline, *names, dedicated)


def start_query(spark: Any, deployment: Deployment, kafka: dict[str, str], work: Path) -> Any:
    """The Generator source query into `deployment.topic`, as the principal in `kafka`."""
    stream = spark.readStream.format("eosconnect").options(**deployment.options(), **kafka).load()
    return (
        stream.writeStream.format("eosconnect")
        .options(name=deployment.connector, **kafka)
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def committed(broker: LocalKafkaBroker, topic: str) -> list[tuple[str, bytes]]:
    """(key, value) of the committed records of `topic`, read as the super user."""
    records = read_to_end(broker.client_config(), [topic], timeout_s=30)
    return [((r.key or b"").decode(), r.value or b"") for r in records]


def principal_with(
    broker: LocalKafkaBroker, make: Callable[[str], Principal], granted: set[Grant]
) -> dict[str, str]:
    """A new principal granted `granted`; its settings as `kafka.` options."""
    principal = make("pipeline")
    broker.create_acls(acl_bindings(principal.user, granted))
    return {f"kafka.{k}": v for k, v in principal.config.items()}


@pytest.mark.parametrize(
    ("dedicated_offsets", "source_rows_only"),
    [(False, False), (True, False), (False, True)],
    ids=["readme-table-global-offsets", "readme-table-dedicated-offsets", "source-rows-only"],
)
def test_the_readme_acls_are_enough_for_the_exactly_once_source_pipeline(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
    dedicated_offsets: bool,
    source_rows_only: bool,
) -> None:
    deployment = make_deployment(secured_broker, dedicated_offsets)
    rows = SOURCE_ROWS if source_rows_only else ACL_ROWS
    granted = grants(deployment.pipeline, rows)
    kafka = principal_with(secured_broker, principal_factory, granted)

    query = start_query(spark, deployment, kafka, tmp_path)
    try:
        wait_for(
            lambda: (
                len(committed(secured_broker, deployment.topic)) >= RECORDS or not query.isActive
            ),
            120,
            f"{RECORDS} committed records",
        )
        assert query.exception() is None
    finally:
        query.stop()

    assert committed(secured_broker, deployment.topic) == expected_records(SEED, 0, 0, RECORDS)


@pytest.mark.parametrize("missing", SOURCE_ROWS, ids=[row.key for row in SOURCE_ROWS])
def test_without_one_row_the_pipeline_fails_early_naming_the_permission(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
    missing: AclRow,
) -> None:
    deployment = make_deployment(secured_broker, dedicated_offsets=False)
    granted = grants_without(deployment.pipeline, missing)
    kafka = principal_with(secured_broker, principal_factory, granted)

    query = start_query(spark, deployment, kafka, tmp_path)
    try:
        with pytest.raises(Exception) as failed:  # Spark wraps the driver's or task's error
            query.awaitTermination(FAIL_WITHIN_S)
            pytest.fail(f"without {missing.key} the query ran on for {FAIL_WITHIN_S}s")
    finally:
        query.stop()

    assert_names_the_missing_acl(str(failed.value), missing, deployment.pipeline)
    for topic in [deployment.topic, deployment.offsets_topic]:
        assert committed(secured_broker, topic) == []


def assert_names_the_missing_acl(message: str, missing: AclRow, pipeline: Pipeline) -> None:
    """`message` says the principal needs `missing`'s operations on one of its resources."""
    needle = f"it needs {' and '.join(missing.operations)} on {missing.resource} '"
    assert needle in message, message[-3000:]
    named = message.split(needle, 1)[1].split("'", 1)[0]
    allowed = missing.names(pipeline)
    assert any(named.startswith(n) if prefixed else named == n for n, prefixed in allowed), named


def test_without_write_on_the_data_topic_the_task_fails_naming_the_topic(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    """The topic-write row's other half: the internal topics are writable, the data topic is
    not, so the source task (not the driver) is refused; Spark's task retries fail the same."""
    deployment = make_deployment(secured_broker, dedicated_offsets=False)
    granted = {g for g in grants(deployment.pipeline) if g.name != deployment.topic}
    kafka = principal_with(secured_broker, principal_factory, granted)

    query = start_query(spark, deployment, kafka, tmp_path)
    try:
        with pytest.raises(Exception) as failed:
            query.awaitTermination(FAIL_WITHIN_S)
            pytest.fail(f"without Write on the data topic the query ran on for {FAIL_WITHIN_S}s")
    finally:
        query.stop()

    assert f"{deployment.topic}: Broker: Topic authorization failed" in str(failed.value)
    for topic in [deployment.topic, deployment.offsets_topic]:
        assert committed(secured_broker, topic) == []
