"""The consumer group of a sink connector, as Kafka Connect names it (pure)."""

from __future__ import annotations


def sink_group_id(connector: str) -> str:
    """``connect-<connector>``: where a sink connector's committed offsets live."""
    return "connect-" + connector
