"""A sink query's connector lifecycle without a broker: Spark's offsets with the reserved keys,
when a stream starts over from the group's offsets, and which options form the connector config."""

from __future__ import annotations

import json

import pytest

from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    TargetState,
    commit_key,
    connector_key,
    encode_commit,
    encode_connector_config,
    encode_target_state,
    target_state_key,
)
from spark_eos_connect.sink.lifecycle import (
    START_KEY,
    TASKS_COMMIT_KEY,
    ConnectorView,
    StreamOffsets,
    batch_start,
    connector_config,
    connector_view,
    continued,
    decode_stream_offsets,
    encode_stream_offsets,
    must_rebase,
    parse_sink_lifecycle,
    rebased,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "localhost:9092"}


def view(state: TargetState = TargetState.STARTED, commit: int | None = None) -> ConnectorView:
    return ConnectorView(exists=True, state=state, tasks_commit=commit, generation=0)


# --- offsets ---------------------------------------------------------------------------------


def test_plain_offsets_keep_the_readers_shape() -> None:
    offsets = StreamOffsets({("t", 1): 4, ("t", 0): 2})

    encoded = encode_stream_offsets(offsets)

    assert json.dumps(encoded) == '{"t": {"0": 2, "1": 4}}'
    assert decode_stream_offsets(json.loads(json.dumps(encoded))) == offsets


def test_reserved_keys_round_trip_after_the_topics() -> None:
    offsets = StreamOffsets({("t", 0): 9}, start={("t", 0): 3}, tasks_commit=17)

    encoded = encode_stream_offsets(offsets)

    assert list(encoded) == ["t", START_KEY, TASKS_COMMIT_KEY]
    assert encoded[START_KEY] == {"t": {"0": 3}}
    assert decode_stream_offsets(json.loads(json.dumps(encoded))) == offsets


def test_no_offsets_yet_decode_as_empty() -> None:
    assert decode_stream_offsets(None) == StreamOffsets({})


@pytest.mark.parametrize(
    "data",
    [{"$other": 1}, {TASKS_COMMIT_KEY: "7"}, {TASKS_COMMIT_KEY: True}, {START_KEY: [1]}, [1]],
)
def test_malformed_offsets_are_rejected(data: object) -> None:
    with pytest.raises(ValueError):
        decode_stream_offsets(data)  # type: ignore[arg-type]


def test_a_batch_starts_at_the_previous_end_unless_its_end_records_a_start() -> None:
    previous = StreamOffsets({("t", 0): 10, ("t", 1): 10})
    normal = StreamOffsets({("t", 0): 12, ("t", 1): 10})
    after_stop = StreamOffsets({("t", 0): 12, ("t", 1): 10}, start={("t", 0): 2, ("t", 1): 7})

    assert batch_start(previous, normal) == {("t", 0): 10, ("t", 1): 10}
    assert batch_start(previous, after_stop) == {("t", 0): 2, ("t", 1): 7}


def test_a_replayed_rebased_batch_reads_the_same_start() -> None:
    """Spark replays from the logged (start, end) JSON: the start comes from the end."""
    begin = {("t", 0): 2}
    end = rebased(begin, {("t", 0): 5}, tasks_commit=40)
    logged = json.loads(json.dumps(encode_stream_offsets(end)))
    previous = json.loads(json.dumps(encode_stream_offsets(StreamOffsets({("t", 0): 10}))))

    replayed = batch_start(decode_stream_offsets(previous), decode_stream_offsets(logged))

    assert replayed == begin


def test_continuing_drops_the_start_and_keeps_the_stop_marker() -> None:
    current = StreamOffsets({("t", 0): 5}, start={("t", 0): 2}, tasks_commit=40)

    assert continued(current, {("t", 0): 8}) == StreamOffsets({("t", 0): 8}, None, 40)


# --- when to start from the group's offsets --------------------------------------------------


def test_no_rebase_without_any_stop() -> None:
    assert not must_rebase(StreamOffsets({}), view(commit=None), stop_seen=False)
    assert not must_rebase(StreamOffsets({}, tasks_commit=7), view(commit=7), stop_seen=False)


def test_a_stop_seen_by_this_driver_rebases() -> None:
    assert must_rebase(StreamOffsets({}, tasks_commit=7), view(commit=7), stop_seen=True)


def test_a_stop_recorded_after_the_streams_marker_rebases() -> None:
    """E.g. stopped, altered and resumed while the query was down or between two reads."""
    assert must_rebase(StreamOffsets({}, tasks_commit=7), view(commit=12), stop_seen=False)
    assert must_rebase(StreamOffsets({}), view(commit=12), stop_seen=False)


def snapshot_of(*records: tuple[str, bytes | None]) -> ClusterConfigSnapshot:
    snapshot = ClusterConfigSnapshot()
    for offset, (key, value) in enumerate(records):
        snapshot.apply(key, value, offset)
    return snapshot


def test_connector_view_of_a_stopped_sink() -> None:
    config = encode_connector_config({"connector.class": "FileStreamSink", "topics": "t"})
    snapshot = snapshot_of(
        (connector_key("s"), config),
        (commit_key("s"), encode_commit(0)),
        (target_state_key("s"), encode_target_state(TargetState.STOPPED)),
    )

    stopped = connector_view(snapshot, "s")

    assert stopped == ConnectorView(True, TargetState.STOPPED, 1, 0)
    assert not stopped.running


def test_an_unknown_connector_runs() -> None:
    unknown = connector_view(ClusterConfigSnapshot(), "s")

    assert unknown == ConnectorView(False, TargetState.STARTED, None, 0)
    assert unknown.running


# --- options ---------------------------------------------------------------------------------


def test_connector_config_drops_kafka_worker_and_reader_only_options() -> None:
    options = {
        "name": "s",
        "connector.class": "FileStreamSink",
        "topics": "t",
        "file": "/tmp/out",
        "startingOffsets": "latest",
        "maxRecordsPerTrigger": "10",
        "kafkaConsumer.pollTimeoutMs": "1000",
        "config.storage.topic": "configs",
        "group.id": "cluster",
        **BOOTSTRAP,
    }

    assert connector_config(options) == {
        "connector.class": "FileStreamSink",
        "file": "/tmp/out",
        "name": "s",
        "topics": "t",
    }


def test_lifecycle_uses_the_worker_options_and_their_defaults() -> None:
    custom = parse_sink_lifecycle(
        {"name": "s", "group.id": "g", "config.storage.topic": "c", **BOOTSTRAP}
    )
    default = parse_sink_lifecycle({"name": "s", "connector.class": "FileStreamSink", **BOOTSTRAP})

    assert custom is not None and default is not None
    assert (custom.group_id, custom.config_topic, custom.status_topic) == (
        "g",
        "c",
        "eosconnect-status",
    )
    assert custom.connector_config is None  # no connector.class: nothing to register
    assert (default.group_id, default.config_topic) == ("eosconnect", "eosconnect-configs")
    assert default.connector_config == {"connector.class": "FileStreamSink", "name": "s"}
    assert default.kafka == {"bootstrap.servers": "localhost:9092"}


def test_the_internal_topics_follow_connects_storage_options() -> None:
    chosen = parse_sink_lifecycle(
        {
            "name": "s",
            "config.storage.replication.factor": "3",
            "status.storage.replication.factor": "-1",
            "status.storage.partitions": "10",
            **BOOTSTRAP,
        }
    )
    left_out = parse_sink_lifecycle({"name": "s", **BOOTSTRAP})

    assert chosen is not None and left_out is not None
    assert chosen.topics.config_replication == 3
    assert (chosen.topics.status_replication, chosen.topics.status_partitions) == (-1, 10)
    assert chosen.connector_config is None  # worker options are not the connector's
    assert left_out.topics.config_replication is None  # Connect's default, not set
    assert left_out.topics.status_partitions == 5


def test_no_name_means_no_connector_to_follow() -> None:
    assert parse_sink_lifecycle({"topics": "t", **BOOTSTRAP}) is None
