"""Errors of a sink connector's consumer-group requests (no client import: the in-memory twin of
`kafka.group_offsets` raises them too). Messages name the connector and are ready to show."""

from __future__ import annotations

from spark_eos_connect.errors import EosConnectError


class ConsumerGroupError(EosConnectError):
    """A consumer-group request failed (the herder answers 500)."""


class ConsumerGroupRefusedError(ConsumerGroupError, ValueError):
    """A consumer-group request was refused because of the request itself (400): the group has
    active members, or a partition does not exist."""


def group_in_use(connector: str, group: str, action: str) -> ConsumerGroupRefusedError:
    """The refusal of a change to the offsets of a group with members (`action`: "altered" or
    "reset")."""
    return ConsumerGroupRefusedError(
        f"The offsets of sink connector {connector} cannot be {action}: its consumer group "
        f"{group} still has active members (its tasks have not stopped yet, or something "
        "else uses the group). Stop every consumer of the group and try again."
    )
