"""`connector_offsets` through the herder on in-memory twins: KIP-875's offsets of source
connectors (offsets topics, fencing) and sink connectors (their consumer groups)."""

from __future__ import annotations

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.herder import BadRequestError
from spark_eos_connect.herder.entities import modified_message
from tests.unit.herder.memory_cluster import (
    STOP_FIRST,
    Cluster,
    RecordingSink,
    RecordingSource,
    add_sink,
    add_source,
    refused,
    sink_offsets,
)

# --- source offsets ----------------------------------------------------------------------------


def test_source_offsets_change_only_when_stopped(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.source_offsets.seed("offsets", name, [({"f": "a"}, {"pos": 1})])
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    assert herder.offsets(name) == {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 1}}]}
    for action in (lambda: herder.alter_offsets(name, body), lambda: herder.reset_offsets(name)):
        with refused(BadRequestError, 400, STOP_FIRST):
            action()
    herder.pause(name)  # PAUSED is not enough
    with refused(BadRequestError, 400, f"'/connectors/{name}/stop'"):
        herder.alter_offsets(name, body)
    assert RecordingSource.calls == [] and cluster.source_offsets.fenced == []

    herder.stop(name)
    assert herder.alter_offsets(name, body) == {"message": modified_message(False, reset=False)}
    assert herder.offsets(name) == {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}
    assert RecordingSource.calls == [[({"f": "a"}, {"pos": 7})]]
    assert cluster.source_offsets.fenced == [f"g-{name}-0", f"g-{name}-1"]  # tasks.max tasks
    assert cluster.source_offsets.transactions == [f"g-{name}"]


def test_source_offsets_reset_tombstones_every_partition_of_both_topics(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster, handled="true", **{"offsets.storage.topic": "own"})
    cluster.source_offsets.seed("offsets", name, [({"f": "a"}, {"pos": 1})])
    cluster.source_offsets.seed("own", name, [({"f": "a"}, {"pos": 2}), ({"f": "b"}, {"pos": 3})])
    cluster.source_offsets.seed("offsets", "other", [({"f": "a"}, {"pos": 9})])

    assert herder.offsets(name)["offsets"] == [  # the dedicated topic's entry wins
        {"partition": {"f": "a"}, "offset": {"pos": 2}},
        {"partition": {"f": "b"}, "offset": {"pos": 3}},
    ]
    herder.stop(name)
    assert herder.reset_offsets(name) == {"message": modified_message(True, reset=True)}

    assert herder.offsets(name) == {"offsets": []}
    assert RecordingSource.calls == [[({"f": "a"}, None), ({"f": "b"}, None)]]
    assert cluster.source_offsets.per_topic(
        "other", cluster.herder.connector_offsets.offset_topics({})
    )["offsets"] == {'{"f":"a"}': ({"f": "a"}, {"pos": 9})}
    assert herder.reset_offsets(name)["message"] == modified_message(True, reset=True)


def test_a_connector_rejecting_offsets_is_a_400_and_nothing_is_written(cluster: Cluster) -> None:
    name = add_source(cluster, reject="positions must grow")
    cluster.herder.stop(name)
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    with refused(BadRequestError, 400, "rejected the offsets: positions must grow"):
        cluster.herder.alter_offsets(name, body)
    assert cluster.source_offsets.topics == {}


def test_source_offsets_without_exactly_once_fence_nothing() -> None:
    cluster = Cluster(exactly_once=False)
    name = add_source(cluster)
    cluster.herder.stop(name)
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    cluster.herder.alter_offsets(name, body)

    assert cluster.source_offsets.fenced == [] and cluster.source_offsets.transactions == []
    assert cluster.herder.offsets(name)["offsets"][0]["offset"] == {"pos": 7}


# --- sink offsets ------------------------------------------------------------------------------


def test_sink_offsets_get_patch_delete(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_sink(cluster)
    patch = sink_offsets("in", (1, 2))

    assert herder.offsets(name) == sink_offsets("in", (0, 5), (1, 8))
    with refused(BadRequestError, 400, STOP_FIRST):
        herder.alter_offsets(name, patch)
    herder.stop(name)

    assert herder.alter_offsets(name, patch) == {"message": modified_message(True, reset=False)}
    assert herder.offsets(name) == sink_offsets("in", (0, 5), (1, 2))
    assert herder.reset_offsets(name) == {"message": modified_message(True, reset=True)}
    assert herder.offsets(name) == {"offsets": []}
    assert RecordingSink.calls == [
        {TopicPartition("in", 1): 2},
        {TopicPartition("in", 0): None, TopicPartition("in", 1): None},
    ]
    assert herder.reset_offsets(name)["message"] == modified_message(True, reset=True)


def test_sink_offsets_refused_while_the_group_has_members_or_for_one_null(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    name = add_sink(cluster)
    herder.stop(name)

    with refused(BadRequestError, 400, "not supported here \\(in-0\\)"):
        herder.alter_offsets(
            name,
            {
                "offsets": [
                    {"partition": {"kafka_topic": "in", "kafka_partition": 0}, "offset": None}
                ]
            },
        )
    cluster.groups.members[f"connect-{name}"] = 1  # a sink task that has not stopped yet
    with refused(BadRequestError, 400, f"consumer group connect-{name} still has active"):
        herder.alter_offsets(name, sink_offsets("in", (0, 1)))
    with refused(BadRequestError, 400, f"{name} cannot be reset: its consumer group"):
        herder.reset_offsets(name)
    assert herder.offsets(name) == sink_offsets("in", (0, 5), (1, 8))
    assert RecordingSink.calls == []
