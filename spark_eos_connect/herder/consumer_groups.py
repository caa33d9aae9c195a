"""A sink connector's consumer group ``connect-<name>`` as the herder uses it (the `GroupOffsets`
port; its Kafka side is `kafka.group_offsets`): the group must have no members before
its offsets change, and the port's errors become the herder's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from spark_eos_connect.herder.errors import BadRequestError, HerderError
from spark_eos_connect.kafka.group_errors import (
    ConsumerGroupError,
    ConsumerGroupRefusedError,
    group_in_use,
)
from spark_eos_connect.ports import GroupOffsets
from spark_eos_connect.protocol.sink_groups import sink_group_id

__all__ = ["group_errors", "require_inactive", "sink_group_id"]


@contextmanager
def group_errors() -> Iterator[None]:
    """A refused request (`ConsumerGroupRefusedError`) as a 400, another failure as a 500; an
    error naming a missing ACL passes as it is."""
    try:
        yield
    except ConsumerGroupRefusedError as exc:
        raise BadRequestError(str(exc)) from exc
    except ConsumerGroupError as exc:
        raise HerderError(str(exc)) from exc


def require_inactive(groups: GroupOffsets, connector: str, group: str, action: str) -> None:
    """`BadRequestError` if the group has members (`action`: "altered" or "reset")."""
    with group_errors():
        if groups.active_members(group):
            raise group_in_use(connector, group, action)
