"""The herder's unit tests' fixture: a fresh `memory_cluster.Cluster`."""

from __future__ import annotations

import pytest

from tests.unit.herder.memory_cluster import Cluster, RecordingSink, RecordingSource


@pytest.fixture
def cluster() -> Cluster:
    """A herder on in-memory twins; the recording connectors forget earlier calls."""
    RecordingSource.calls.clear()
    RecordingSink.calls.clear()
    return Cluster()
