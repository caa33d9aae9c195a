"""Subject name strategies by Confluent's class names and short names."""

from __future__ import annotations

import pytest

from spark_eos_connect.converters.subject_names import subject_name_strategy
from spark_eos_connect.errors import ConfigError


@pytest.mark.parametrize(
    ("name", "is_key", "subject"),
    [
        ("TopicNameStrategy", False, "orders-value"),
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", True, "orders-key"),
        ("RecordNameStrategy", False, "com.example.Order"),
        (
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
            True,
            "orders-com.example.Order",
        ),
    ],
)
def test_strategies_name_the_subject(name: str, is_key: bool, subject: str) -> None:
    assert subject_name_strategy(name, "x")("orders", is_key, "com.example.Order") == subject


def test_an_unknown_strategy_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="TopicRecordNameStrategy"):
        subject_name_strategy("Other", "value.subject.name.strategy")
