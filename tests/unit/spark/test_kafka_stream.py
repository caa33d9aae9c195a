"""`spark.kafka_stream`: the Kafka stream reader reads its options once, each with its
definition, and refuses a bad one naming it."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.spark.kafka_stream import (
    EosConnectKafkaStreamReader,
    parse_kafka_stream,
    sink_tasks,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9"}
SINK = {"topics": "t", "name": "n", "connector.class": "FileStreamSink", **BOOTSTRAP}


def test_sink_tasks_come_from_tasks_max_only_with_a_connector_class() -> None:
    assert sink_tasks({"topics": "t"}) is None
    assert sink_tasks({"topics": "t", "connector.class": "FileStreamSink"}) == 1
    assert sink_tasks({"connector.class": "FileStreamSink", "TASKS.MAX": "3"}) == 3
    # DeltaSink runs through foreachBatch on the driver: no sink tasks to plan for
    assert sink_tasks({"connector.class": "DeltaSink", "tasks.max": "x"}) is None
    assert sink_tasks({"connector.class": "no.such.Connector"}) is None
    assert sink_tasks({"topics": "t", "tasks.max": "x"}) is None  # no connector: not read


def test_tasks_max_is_parsed_as_the_sink_writer_parses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SINK_TASKS", "4")
    assert sink_tasks({**SINK, "tasks.max": "${env:SINK_TASKS}"}) == 4

    with pytest.raises(InvalidConfigError) as zero:
        sink_tasks({**SINK, "tasks.max": "0"})
    assert set(zero.value.problems) == {"tasks.max"}
    with pytest.raises(InvalidConfigError, match=r"tasks\.max"):
        sink_tasks({**SINK, "tasks.max": "many"})
    with pytest.raises(ConfigError, match=r"Cannot resolve \$\{env:NO_SUCH_VAR\} in option tasks"):
        sink_tasks({**SINK, "tasks.max": "${env:NO_SUCH_VAR}"})


def test_one_parse_gives_the_reader_the_connector_and_the_sink_tasks() -> None:
    parsed = parse_kafka_stream(
        {**SINK, "TASKS.MAX": "2", "takeover": "TRUE", "group.id": "g", "startingOffsets": "latest"}
    )

    assert parsed.reader.topics == ("t",)
    assert parsed.reader.starting_offsets == "latest"
    assert parsed.sink_tasks == 2
    assert parsed.lifecycle is not None
    assert (parsed.lifecycle.name, parsed.lifecycle.group_id) == ("n", "g")
    assert parsed.lifecycle.takeover is True
    assert parse_kafka_stream({"topics": "t", **BOOTSTRAP}).lifecycle is None


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({**SINK, "takeover": "yes"}, "takeover"),
        ({**SINK, "tasks.max": "-1"}, "tasks.max"),
        ({**SINK, "topics.regex": "t.*"}, "topics.regex"),
        ({**SINK, "kafka.group.id": "g"}, "kafka.group.id"),
        ({**SINK, "config.storage.topic": ""}, "config.storage.topic"),
    ],
)
def test_a_bad_option_is_refused_naming_it(options: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        parse_kafka_stream(options)


def test_the_reader_takes_its_options_from_the_one_parse() -> None:
    read = DataSourceOptions.read({**SINK, "tasks.max": "3", "maxRecordsPerTrigger": "7"})
    reader = EosConnectKafkaStreamReader(read)

    assert reader.config == parse_kafka_stream(read).reader
    assert reader.config.max_records_per_trigger == 7
    assert reader._sink_tasks == 3
    with pytest.raises(ConfigError, match="takeover"):
        EosConnectKafkaStreamReader({**SINK, "takeover": "maybe"})
