"""Spark's built-in Kafka source (`format("kafka")`) as the input of `delta_sink`, built from
the sink's own options.

The project's options name Kafka client settings as the `eosconnect` reader's librdkafka
clients do (`kafka.` + librdkafka's names); Spark's Kafka source runs Java clients and takes
the Java client's names. The settings a connection needs are translated (address, security
protocol, SASL credentials, the CA certificate, a few fetch sizes); any other setting is
refused by name rather than dropped, since a dropped setting would change what is read or how.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.option_keys import lowered
from spark_eos_connect.sink.kafka_input import KafkaReaderConfig, parse_reader_options

SAME_NAME = frozenset(
    {
        "bootstrap.servers",
        "client.id",
        "client.rack",
        "security.protocol",
        "sasl.mechanism",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "max.partition.fetch.bytes",
        "reconnect.backoff.ms",
        "reconnect.backoff.max.ms",
        "retry.backoff.ms",
        "metadata.max.age.ms",
    }
)
"""librdkafka settings whose Java client setting has the same name and meaning."""

RENAMED = {
    "sasl.mechanisms": "sasl.mechanism",
    "fetch.wait.max.ms": "fetch.max.wait.ms",
    "socket.receive.buffer.bytes": "receive.buffer.bytes",
    "socket.send.buffer.bytes": "send.buffer.bytes",
    "ssl.ca.location": "ssl.truststore.location",
}
"""librdkafka setting -> the Java client's name for it."""

SET_BY_READER = frozenset({"isolation.level"})
"""Checked by `parse_reader_options` (read_committed only) and always set."""

LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
"""SASL mechanism -> the Java login module taking a username and a password."""

SOURCE_OPTIONS = frozenset(
    {
        "kafkaconsumer.polltimeoutms",
        "fetchoffset.numretries",
        "fetchoffset.retryintervalms",
        "failondataloss",
        "minpartitions",
        "minoffsetspertrigger",
        "maxtriggerdelay",
        "groupidprefix",
    }
)
"""Options of Spark's Kafka source passed through as given (lower-case names)."""


def jaas_quoted(value: str) -> str:
    """`value` as a double-quoted JAAS option value."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sasl_jaas_config(mechanism: str, username: str, password: str) -> str:
    """The Java client's `sasl.jaas.config` for librdkafka's `sasl.username`/`sasl.password`."""
    module = LOGIN_MODULES.get(mechanism.upper())
    if module is None:
        raise ConfigError(
            f"Options kafka.sasl.username and kafka.sasl.password with kafka.sasl.mechanism="
            f"{mechanism}: Spark's Kafka source takes a username and password for "
            f"{', '.join(LOGIN_MODULES)} only; use the eosconnect reader"
        )
    return f"{module} required username={jaas_quoted(username)} password={jaas_quoted(password)};"


def java_client_settings(kafka: Mapping[str, str]) -> dict[str, str]:
    """The Java client's settings (unprefixed) for librdkafka's `kafka`, read_committed.

    Raises ConfigError naming every setting that has no translation."""
    settings = {"isolation.level": "read_committed"}
    refused: list[str] = []
    for name, value in kafka.items():
        if name in SAME_NAME:
            settings[name] = value
        elif name in RENAMED:
            settings[RENAMED[name]] = value
        elif name == "ssl.endpoint.identification.algorithm":
            settings[name] = "" if value.lower() == "none" else value
        elif name not in SET_BY_READER | {"sasl.username", "sasl.password"}:
            refused.append(f"kafka.{name}")
    if refused:
        raise ConfigError(
            f"{'Options' if len(refused) > 1 else 'Option'} {', '.join(sorted(refused))}: no "
            "Java client setting is known for this librdkafka setting, and Spark's Kafka source "
            f"runs Java clients. Translated: kafka.{', kafka.'.join(sorted(SAME_NAME))}, "
            f"kafka.{', kafka.'.join(sorted(RENAMED))}, kafka.sasl.username with "
            "kafka.sasl.password; or read with the eosconnect reader, which takes every "
            "librdkafka setting"
        )
    if "ssl.truststore.location" in settings:
        settings["ssl.truststore.type"] = "PEM"  # librdkafka's CA file is PEM
    username, password = kafka.get("sasl.username"), kafka.get("sasl.password")
    if (username is None) != (password is None):
        raise ConfigError("Options kafka.sasl.username and kafka.sasl.password go together")
    if username is not None and password is not None:
        mechanism = settings.get("sasl.mechanism", "GSSAPI")
        settings["sasl.jaas.config"] = sasl_jaas_config(mechanism, username, password)
    return settings


def spark_kafka_options(
    options: Mapping[str, Any], kafka: Mapping[str, str], starting: str | None
) -> dict[str, str]:
    """Spark's Kafka source options reading what the `delta_sink` options name: `topics` or
    `topics.regex`, `maxRecordsPerTrigger`, headers included, from `starting` (JSON of the
    table's offsets, see `delta.starting_offsets`) or else the `startingOffsets` option.

    `kafka`: the `kafka.` settings, config provider references resolved."""
    config: KafkaReaderConfig = parse_reader_options(options)
    source = {f"kafka.{k}": v for k, v in java_client_settings(kafka).items()}
    if config.topics_regex is not None:
        source["subscribePattern"] = config.topics_regex
    else:
        source["subscribe"] = ",".join(config.topics)
    source["includeHeaders"] = "true"
    given = lowered(options).get("startingoffsets")
    given = None if given is None else str(given)
    source["startingOffsets"] = starting or given or "earliest"
    if config.max_records_per_trigger is not None:
        source["maxOffsetsPerTrigger"] = str(config.max_records_per_trigger)
    for name, value in options.items():
        if str(name).lower() in SOURCE_OPTIONS:
            source[str(name)] = str(value)
    return source


def spark_kafka_stream(spark: Any, options: Mapping[str, Any], starting: str | None) -> Any:
    """Driver: the streaming DataFrame of Spark's Kafka source for `delta_sink(options)`."""
    config = parse_reader_options(options)
    kafka = config.providers.resolve(config.kafka, prefix="kafka.")
    source = spark_kafka_options(options, kafka, starting)
    return spark.readStream.format("kafka").options(**source).load()
