"""The `Herder` façade: what it needs to start."""

from __future__ import annotations

import pytest

from spark_eos_connect.herder import Herder


def test_a_herder_needs_kafka_settings_or_stores() -> None:
    with pytest.raises(ValueError, match="Kafka client settings or its stores"):
        Herder()
