"""Fault specs of the crash tests."""

from __future__ import annotations

from spark_eos_connect.runtime.faults import armed_batches


def test_fault_spec_arms_points_per_batch() -> None:
    spec = "poll@1, after_commit@3,before_commit@x"

    assert armed_batches("poll", spec) == {1}
    assert armed_batches("after_commit", spec) == {3}
    assert armed_batches("before_commit", spec) == set()
    assert armed_batches("poll", None) == set()
