"""Parsing the framework's options: defaults, Kafka passthrough, errors that name the option, and
no Python conversion of the records of a Java plugin, whose converters may be plugin.path's."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.source.config import parse_source_pipeline

BASE = {
    "name": "orders",
    "connector.class": "Generator",
    "kafka.bootstrap.servers": "localhost:9092",
    "topic": "events",
}


def test_defaults_follow_connect_and_never_join_a_real_connect_cluster() -> None:
    config = parse_source_pipeline(BASE)

    assert config.group_id == "eosconnect"
    assert config.offsets_topic == "eosconnect-offsets"
    assert config.config_topic == "eosconnect-configs"
    assert config.status_topic == "eosconnect-status"
    assert config.exactly_once and config.transaction_boundary == "poll"
    assert config.task_transactional_id(3) == "eosconnect-orders-3"
    assert config.leader_transactional_id == "connect-cluster-eosconnect"
    assert config.offsets_transactional_id == "eosconnect-orders"


def test_internal_topics_follow_connects_options_and_remember_which_were_set() -> None:
    left_out = parse_source_pipeline(BASE).topics
    chosen = parse_source_pipeline(
        {
            **BASE,
            "offset.storage.replication.factor": "3",
            "config.storage.replication.factor": "-1",
            "status.storage.replication.factor": "2",
            "offset.storage.partitions": "-1",
            "status.storage.partitions": "7",
        }
    ).topics

    assert (left_out.offsets_partitions, left_out.status_partitions) == (25, 5)
    assert left_out.config_replication is None  # Connect's default (3), not set
    assert left_out.offsets_replication is None and left_out.status_replication is None
    assert (chosen.offsets_replication, chosen.config_replication) == (3, -1)
    assert (chosen.status_replication, chosen.offsets_partitions) == (2, -1)
    assert chosen.status_partitions == 7


def test_kafka_options_pass_through_without_prefix_and_the_rest_go_to_the_connector() -> None:
    config = parse_source_pipeline({**BASE, "kafka.acks": "all", "seed": "7"})

    assert config.kafka == {"bootstrap.servers": "localhost:9092", "acks": "all"}
    assert config.connector_props["seed"] == "7"
    assert config.connector_props["topic"] == "events"
    assert "kafka.acks" not in config.connector_props


def test_spark_style_options_are_case_insensitive() -> None:
    config = parse_source_pipeline({**BASE, "maxRecordsPerTrigger": "500"})

    assert config.max_records_per_trigger == 500


def test_dedicated_offsets_topic_becomes_primary() -> None:
    config = parse_source_pipeline({**BASE, "offsets.storage.topic": "orders-offsets"})

    assert config.primary_offsets_topic == "orders-offsets"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"tasks.max": "zero"}, "tasks.max"),
        ({"tasks.max": "0"}, "tasks.max"),
        ({"transaction.boundary": "sometimes"}, "transaction.boundary"),
        ({"exactly.once.source.support": "maybe"}, "exactly.once.source.support"),
        ({"maxRecordsPerTrigger": "-1"}, "maxrecordspertrigger"),
        ({"offset.storage.replication.factor": "0"}, "offset.storage.replication.factor"),
        ({"config.storage.replication.factor": "-2"}, "config.storage.replication.factor"),
        ({"status.storage.replication.factor": "three"}, "status.storage.replication.factor"),
        ({"status.storage.partitions": "0"}, "status.storage.partitions"),
    ],
)
def test_bad_values_are_rejected_naming_the_option(options: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        parse_source_pipeline({**BASE, **options})


def test_missing_connector_class_and_bootstrap_servers_are_named() -> None:
    without_class = {k: v for k, v in BASE.items() if k != "connector.class"}
    with pytest.raises(ConfigError, match=r"connector\.class"):
        parse_source_pipeline(without_class)
    without_kafka = {k: v for k, v in BASE.items() if not k.startswith("kafka.")}
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
        parse_source_pipeline(without_kafka)


def test_user_transactional_id_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.transactional\.id"):
        parse_source_pipeline({**BASE, "kafka.transactional.id": "mine"})


def test_config_providers_are_worker_options_and_references_stay_unresolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EOS_TEST_TASKS", "3")
    config = parse_source_pipeline(
        {
            **BASE,
            "config.providers": "env,file",
            "config.providers.file.param.allowed.paths": "/secrets",
            "tasks.max": "${env:EOS_TEST_TASKS}",
            "api.token": "${file:/secrets/app.properties:token}",
            "kafka.sasl.password": "${env:KAFKA_PASSWORD}",
        }
    )

    assert config.providers.names == ["env", "file"]
    assert config.tasks_max == 3  # framework values are resolved: the driver needs them
    assert not any(k.startswith("config.providers") for k in config.connector_props)
    assert config.connector_props["tasks.max"] == "${env:EOS_TEST_TASKS}"
    assert config.connector_props["api.token"] == "${file:/secrets/app.properties:token}"
    assert config.kafka["sasl.password"] == "${env:KAFKA_PASSWORD}"


def test_bad_provider_settings_and_a_referenced_name_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"config\.providers\.vault\.class"):
        parse_source_pipeline({**BASE, "config.providers": "vault"})
    with pytest.raises(ConfigError, match="Option name cannot hold"):
        parse_source_pipeline({**BASE, "name": "${env:NAME}"})
    with pytest.raises(ConfigError, match=r"Cannot resolve \$\{env:EOS_UNSET_X\} in option tasks"):
        parse_source_pipeline({**BASE, "tasks.max": "${env:EOS_UNSET_X}"})


def java_connector(plugin_path: Path, *classes: str) -> dict[str, str]:
    """`BASE` naming the Java connector `com.example.JavaSource`, which a jar in `plugin_path`
    holds with `classes`."""
    with zipfile.ZipFile(plugin_path / "plugin.jar", "w") as archive:
        for name in ("com.example.JavaSource", *classes):
            archive.writestr(name.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return {**BASE, "connector.class": "com.example.JavaSource", "plugin.path": str(plugin_path)}


def test_a_java_plugins_records_are_converted_in_its_jvm_with_plugin_path_converters(
    tmp_path: Path,
) -> None:
    java = {
        **java_connector(tmp_path, "com.example.JavaConverter"),
        "value.converter": "com.example.JavaConverter",
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "events",
        "transforms.route.replacement": "routed",
    }

    assert parse_source_pipeline(java).conversion is None  # its JVM task host converts
    with pytest.raises(InvalidConfigError) as refused:
        parse_source_pipeline({**java, "value.converter": "com.example.Nowhere"})
    assert "'com.example.Nowhere' was found neither in plugin.path" in str(refused.value)
    unknown = "org.apache.kafka.connect.transforms.NoSuchTransform"
    with pytest.raises(InvalidConfigError) as refused:  # as load() refuses it
        parse_source_pipeline({**java, "transforms.route.type": unknown})
    assert list(refused.value.problems) == ["transforms.route.type"]
    assert f"plugin.path {[str(tmp_path)]} does not hold it either" in str(refused.value)
    python = {**BASE, "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    assert parse_source_pipeline(python).conversion is not None


def test_a_java_plugins_own_transforms_and_predicates_are_left_to_its_jvm(tmp_path: Path) -> None:
    java = {
        **java_connector(tmp_path, "com.example.Unwrap", "com.example.IsTombstone"),
        "transforms": "unwrap,route",
        "transforms.unwrap.type": "com.example.Unwrap",
        "transforms.unwrap.any.option": "the plugin's own",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "events",
        "transforms.route.replacement": "routed",
        "transforms.route.predicate": "tombstone",
        "transforms.route.negate": "true",
        "predicates": "tombstone",
        "predicates.tombstone.type": "com.example.IsTombstone",
    }

    assert parse_source_pipeline(java).conversion is None
    with pytest.raises(InvalidConfigError) as refused:  # this project's check of Connect's own
        parse_source_pipeline({**java, "transforms.route.regex": "("})
    assert list(refused.value.problems) == ["transforms.route.regex"]
    with pytest.raises(InvalidConfigError) as refused:  # checked though its predicate is not
        parse_source_pipeline({**java, "transforms.route.negate": "maybe"})
    assert list(refused.value.problems) == ["transforms.route.negate"]
    python = {**java, "connector.class": "FileStreamSource", "file": "x", "topic": "t"}
    with pytest.raises(InvalidConfigError) as refused:  # a Python connector has no plugins
        parse_source_pipeline(python)
    assert "transforms.unwrap.type" in refused.value.problems
