"""Whether a Spark query owns a connector, told by the connector's status record (pure).

A query is its connector's worker: its driver reports the connector's state under its own worker
id (``host:pid``) and takes the connector's config from the query's options, writing it to the
config topic at each new generation. So a config changed through the REST API while a query owns
the connector would be ignored, then overwritten: the herder refuses it instead (409).

A query owns the connector while the latest connector status was written by a worker that is not
a herder, in any state but UNASSIGNED (which a query writes when it stops).
"""

from __future__ import annotations

from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.runtime.lifecycle.liveness import HERDER_WORKER_SUFFIX

__all__ = ["HERDER_WORKER_SUFFIX", "is_herder", "owned_config_message", "query_owner"]


def is_herder(worker_id: str, herder_worker_id: str) -> bool:
    """Whether `worker_id` names this herder or any herder with the default id."""
    return worker_id == herder_worker_id or worker_id.endswith(HERDER_WORKER_SUFFIX)


def query_owner(record: StatusRecord | None, herder_worker_id: str) -> StatusRecord | None:
    """`record` if it shows a query running the connector, else None."""
    if record is None or record.state is StatusState.UNASSIGNED:
        return None
    if is_herder(record.worker_id, herder_worker_id):
        return None
    return record


def owned_config_message(name: str, owner: StatusRecord) -> str:
    """The 409 message for a config change to connector `name`, which `owner`'s query runs."""
    return (
        f"Connector {name} is run by the Spark query whose driver is {owner.worker_id} "
        f"(connector {owner.state.value}, generation {owner.generation}); the query takes the "
        "connector's config from its options and writes it to the config topic at each new "
        "generation, so this change would be ignored, then overwritten. Change the query's "
        "options and restart the query instead; if no query runs the connector any more, "
        f"DELETE /connectors/{name} and create it again."
    )
