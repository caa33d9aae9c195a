"""`protocol.sink_groups`: a sink connector's group name, what one task's `pre_commit` lets it
commit (Connect's `WorkerSinkTask` rules), and what a micro-batch's tasks commit together."""

from __future__ import annotations

import logging

import pytest

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.sink_groups import (
    merge_committable,
    sink_group_id,
    task_committable,
)


def test_a_sink_connectors_group_is_connect_dash_its_name() -> None:
    assert sink_group_id("orders-to-files") == "connect-orders-to-files"


def test_a_task_commits_what_pre_commit_returned_for_its_partitions() -> None:
    returned = {TopicPartition("t", 0): 2, TopicPartition("t", 1): 0}

    assert task_committable("T", returned, {("t", 0), ("t", 1), ("t", 2)}) == {
        ("t", 0): 2,
        ("t", 1): 0,
    }


def test_an_offset_for_a_partition_the_task_is_not_assigned_is_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    returned = {TopicPartition("t", 0): 2, TopicPartition("other", 0): 9}

    with caplog.at_level(logging.WARNING):
        committable = task_committable("T", returned, {("t", 0)})

    assert committable == {("t", 0): 2}
    assert "unassigned partition other-0" in caplog.text


@pytest.mark.parametrize("offset", [-1, True, 1.5, "3", None])
def test_an_invalid_offset_fails_the_task_naming_it(offset: object) -> None:
    with pytest.raises(EosConnectError, match=r"T\.pre_commit returned invalid offset .* for t-0"):
        task_committable("T", {TopicPartition("t", 0): offset}, {("t", 0)})


def test_a_micro_batch_commits_the_highest_offset_per_partition() -> None:
    committables = [[("t", 0, 5), ("t", 1, 2)], [("t", 0, 9)], []]

    assert merge_committable(committables) == {("t", 0): 9, ("t", 1): 2}


def test_no_committable_offsets_commit_nothing() -> None:
    assert merge_committable([]) == {}
