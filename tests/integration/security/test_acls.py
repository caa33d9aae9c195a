"""README.md's ACL table, proven against a SASL_SSL broker that enforces ACLs.

Each path of the table's "needed by" column (the exactly-once source query, a Kafka → sink
connector query, a Kafka → Delta query, the REST API's and CLI's connector and offsets
operations) runs as a principal granted exactly the rows the path needs; then, row by row, the
same run without one of those rows fails early, naming the missing permission and resource, and
commits nothing. A principal granted the whole table runs the source pipeline with the global
and with a dedicated offsets topic.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.errors import KafkaAuthorizationError
from spark_eos_connect.sink.kafka_input import KafkaMetadata, parse_reader_options

from .acl_table import (
    ACL_ROWS,
    DELTA,
    PATHS,
    SINK,
    SOURCE,
    AclRow,
    Grant,
    Pipeline,
    grants,
    grants_without,
    rows_for,
)
from .conftest import SECURITY_MARKS, Principal
from .paths import (
    FAIL_WITHIN_S,
    RUNS,
    Context,
    DeltaRun,
    SinkRun,
    SourceRun,
    committed,
    group_offsets,
    kafka_options,
    make_deployment,
    principal_with,
    start_source_query,
)

pytestmark = SECURITY_MARKS

ROWS = {row.key: row for row in ACL_ROWS}
ROW_CASES = [(path, row) for path in PATHS for row in rows_for(path)]


@pytest.mark.parametrize("dedicated_offsets", [False, True], ids=["global", "dedicated"])
def test_the_whole_readme_table_is_enough_for_the_exactly_once_source_pipeline(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
    dedicated_offsets: bool,
) -> None:
    deployment = make_deployment(secured_broker, dedicated_offsets)
    principal = principal_with(secured_broker, principal_factory, grants(deployment.pipeline))
    context, run = Context(spark, secured_broker, tmp_path), SourceRun()

    assert run.run(context, deployment, principal) is None
    run.assert_succeeded(context, deployment)


@pytest.mark.parametrize("path", PATHS)
def test_each_path_runs_with_exactly_its_rows(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
    path: str,
) -> None:
    deployment = make_deployment(secured_broker)
    context, run = Context(spark, secured_broker, tmp_path), RUNS[path]()
    run.prepare(context, deployment)
    granted = grants(deployment.pipeline, rows_for(path))
    principal = principal_with(secured_broker, principal_factory, granted)

    assert run.run(context, deployment, principal) is None
    run.assert_succeeded(context, deployment)


@pytest.mark.parametrize(
    ("path", "missing"), ROW_CASES, ids=[f"{path}-without-{row.key}" for path, row in ROW_CASES]
)
def test_without_one_row_the_path_fails_early_naming_the_permission(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
    path: str,
    missing: AclRow,
) -> None:
    deployment = make_deployment(secured_broker)
    context, run = Context(spark, secured_broker, tmp_path), RUNS[path]()
    run.prepare(context, deployment)
    granted = grants_without(deployment.pipeline, missing, rows_for(path))
    principal = principal_with(secured_broker, principal_factory, granted)

    started = time.monotonic()
    message = run.run(context, deployment, principal)

    assert message is not None, f"{path} ran through without {missing.key}"
    assert time.monotonic() - started < FAIL_WITHIN_S
    run.assert_nothing_committed(context, deployment)
    assert_names_the_missing_acl(message, missing, deployment.pipeline)


NEEDS = re.compile(r"it needs (\w+(?: and \w+)*) on (\w+) '([^']*)'")


def names_the_missing_acl(message: str, missing: AclRow, pipeline: Pipeline) -> bool:
    """Whether `message` says the principal needs some of `missing`'s operations on one of its
    resources (`it needs Read and Describe on Topic 'x'`; `Describe` alone names the row too)."""
    allowed = missing.names(pipeline)
    for operations, resource, named in NEEDS.findall(message):
        if resource != missing.resource or not set(operations.split(" and ")) <= set(
            missing.operations
        ):
            continue
        if any(named.startswith(n) if prefixed else named == n for n, prefixed in allowed):
            return True
    return False


def assert_names_the_missing_acl(message: str, missing: AclRow, pipeline: Pipeline) -> None:
    """`message` names `missing`'s operations and one of its resources."""
    assert names_the_missing_acl(message, missing, pipeline), message[-3000:]


def test_without_write_on_the_data_topic_the_task_fails_naming_the_topic(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    """The topic-write row's other half: the internal topics are writable, the data topic is
    not, so the source task (not the driver) is refused; Spark's task retries fail the same."""
    deployment = make_deployment(secured_broker)
    source_grants = grants(deployment.pipeline, rows_for(SOURCE))
    granted = {g for g in source_grants if g.name != deployment.topic}
    kafka = kafka_options(principal_with(secured_broker, principal_factory, granted))

    query = start_source_query(spark, deployment, kafka, tmp_path)
    try:
        with pytest.raises(Exception) as failed:
            query.awaitTermination(FAIL_WITHIN_S)
            pytest.fail(f"without Write on the data topic the query ran on for {FAIL_WITHIN_S}s")
    finally:
        query.stop()

    message = str(failed.value)
    assert f"{deployment.topic}: Broker: Topic authorization failed" in message
    assert f"it needs Write on Topic '{deployment.topic}'" in message
    for topic in [deployment.topic, deployment.offsets_topic]:
        assert committed(secured_broker, topic) == []


def test_without_write_on_the_offsets_topic_the_task_fails_naming_it(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    """Read but not Write on the offsets topic: the driver reads it, the task's transaction may
    not add it, and the failure names the topic and the operation."""
    deployment = make_deployment(secured_broker)
    source_grants = grants(deployment.pipeline, rows_for(SOURCE))
    granted = {
        g
        for g in source_grants
        if not (g.name == deployment.offsets_topic and g.operation.upper() == "WRITE")
    }
    kafka = kafka_options(principal_with(secured_broker, principal_factory, granted))

    query = start_source_query(spark, deployment, kafka, tmp_path)
    try:
        with pytest.raises(Exception) as failed:
            query.awaitTermination(FAIL_WITHIN_S)
            pytest.fail(f"without Write on the offsets topic the query ran on for {FAIL_WITHIN_S}s")
    finally:
        query.stop()

    assert f"it needs Write on Topic '{deployment.offsets_topic}'" in str(failed.value)
    for topic in [deployment.topic, deployment.offsets_topic]:
        assert committed(secured_broker, topic) == []


def test_with_describe_but_not_read_on_its_group_the_sink_query_fails_at_its_commit(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    """The sink-group-read row's other half: Describe on `connect-<name>` lets the reader fetch
    the group's offsets, but committing them needs Read; the commit is refused and named (not
    skipped), and the group holds no offsets."""
    deployment = make_deployment(secured_broker)
    group = f"connect-{deployment.sink_connector}"
    without_read = grants_without(deployment.pipeline, ROWS["sink-group-read"], rows_for(SINK))
    granted = {*without_read, Grant("Describe", "Group", group)}
    principal = principal_with(secured_broker, principal_factory, granted)
    context = Context(spark, secured_broker, tmp_path)

    message = SinkRun().run(context, deployment, principal)

    assert message is not None, "the sink query ran through without Read on its group"
    assert f"it needs Read on Group '{group}'" in message, message[-3000:]
    assert group_offsets(secured_broker, deployment.sink_connector) == {}


def test_a_topic_the_reader_may_not_describe_fails_the_query_naming_it(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    """The topic-read row's other half: the internal topics are readable, the topic a Delta
    query subscribes to by name is not even visible (the broker leaves it out of the topic
    list); the query fails naming the ACL instead of reading nothing, and writes nothing."""
    deployment = make_deployment(secured_broker)
    delta_grants = grants(deployment.pipeline, rows_for(DELTA))
    granted = {g for g in delta_grants if g.name != deployment.sink_topic}
    principal = principal_with(secured_broker, principal_factory, granted)
    context, run = Context(spark, secured_broker, tmp_path), DeltaRun()

    message = run.run(context, deployment, principal)

    assert message is not None, "the Delta query ran through without seeing its topic"
    needs = f"it needs Read and Describe on Topic '{deployment.sink_topic}'"
    assert needs in message, message[-3000:]
    run.assert_nothing_committed(context, deployment)


def test_an_invisible_topic_fails_a_read_by_name_and_does_not_match_a_regex(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
) -> None:
    """Subscribed by name, a topic the principal may not Describe fails the read naming the
    ACL (one that does not exist yet is waited for); by pattern it is not matched, as with
    Kafka's own pattern subscription."""
    deployment = make_deployment(secured_broker)
    visible, hidden = deployment.topic, deployment.sink_topic
    not_yet = f"{visible}-later"
    granted = {Grant("Describe", "Topic", visible), Grant("Describe", "Topic", not_yet)}
    principal = principal_with(secured_broker, principal_factory, granted)
    metadata = KafkaMetadata(principal.config)

    def partitions(**subscription: str) -> list[tuple[str, int]]:
        options = {**subscription, "kafka.bootstrap.servers": secured_broker.bootstrap_servers}
        return metadata.partitions(parse_reader_options(options))

    pattern = "|".join(re.escape(topic) for topic in (visible, hidden))
    assert partitions(**{"topics.regex": pattern}) == [(visible, 0)]
    assert partitions(topics=f"{visible},{not_yet}") == [(visible, 0)]
    with pytest.raises(KafkaAuthorizationError) as refused:
        partitions(topics=f"{visible},{hidden}")
    assert f"it needs Read and Describe on Topic '{hidden}'" in str(refused.value)
    assert not_yet not in secured_broker_topics(secured_broker), "asking about it created it"


def secured_broker_topics(broker: LocalKafkaBroker) -> set[str]:
    """The broker's topics, listed as the super user."""
    return set(KafkaMetadata(broker.client_config()).admin.list_topics(timeout=30).topics)
