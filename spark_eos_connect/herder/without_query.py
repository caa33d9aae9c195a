"""The status of a connector that no Spark query runs, and which status the offsets accept (pure).

A Spark query is its connector's worker: the REST API and the CLI only write configs and target
states to the config topic. While no query runs a connector, the herder writes the status that
the target state implies, as a Connect worker's status would follow it, saying in `trace` that no
query runs the connector and how to start one:

=============  ===========================  =========================================
target state   status (no query runs it)    offsets
=============  ===========================  =========================================
STARTED        UNASSIGNED, trace: no query  GET; PATCH and DELETE refused (400)
PAUSED         PAUSED, trace: no query      GET; PATCH and DELETE refused (400)
STOPPED        STOPPED                      GET, PATCH and DELETE
=============  ===========================  =========================================

A query that runs the connector (a live driver's RUNNING or PAUSED status) reports its states
itself. A FAILED connector stays FAILED when paused or resumed, as in Connect (a failed connector
only transitions to STOPPED), until it is stopped, restarted or a new query starts it. Views show
STOPPED exactly when the offsets endpoints accept changes (`offsets_modifiable`); GET answers in
every state, as in Connect.
"""

from __future__ import annotations

from dataclasses import replace

from spark_eos_connect.herder.ownership import is_herder
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.runtime.lifecycle.liveness import OWNING_STATES

STATE_WITHOUT_QUERY = {
    TargetState.STARTED: StatusState.UNASSIGNED,
    TargetState.PAUSED: StatusState.PAUSED,
    TargetState.STOPPED: StatusState.STOPPED,
}
"""The connector status a target state implies while no query runs the connector."""


def no_query_note(name: str, target: TargetState) -> str:
    """The `trace` of a connector no query runs: what that means and how to start one."""
    paused = " (it starts PAUSED)" if target is TargetState.PAUSED else ""
    return (
        f"No Spark query runs connector {name}: the REST API and the CLI only write its config "
        f"and target state ({target.value}) to the config topic. Start a query to run it"
        f'{paused}: spark.readStream.format("eosconnect").option("name", "{name}") with '
        'the connector\'s options, written with writeStream.format("eosconnect") and the '
        "same name (docs: rest-and-cli.md, 'Define, then start')."
    )


def status_without_query(
    name: str, target: TargetState, worker_id: str, generation: int
) -> StatusRecord:
    """The status the herder (`worker_id`) writes for `target` while no query runs `name`."""
    state = STATE_WITHOUT_QUERY[target]
    trace = None if state is StatusState.STOPPED else no_query_note(name, target)
    return StatusRecord(state, worker_id, generation, trace)


def query_reports(record: StatusRecord | None, herder_id: str) -> bool:
    """Whether a running query reports the connector's states: its live driver's RUNNING or
    PAUSED status (`record` as seen now, a silent driver's already UNASSIGNED)."""
    return (
        record is not None
        and record.state in OWNING_STATES
        and not is_herder(record.worker_id, herder_id)
    )


def herder_reports(record: StatusRecord | None, target: TargetState, herder_id: str) -> bool:
    """Whether the herder writes `status_without_query` after setting `target`: not while a
    query reports the states, nor over a query's FAILED status unless stopping (Connect's
    failed connector only transitions to STOPPED)."""
    if query_reports(record, herder_id):
        return False
    if record is None or record.state is not StatusState.FAILED:
        return True
    return is_herder(record.worker_id, herder_id) or target is TargetState.STOPPED


def offsets_modifiable(target: TargetState | None, committed_tasks: int | None) -> bool:
    """Whether offsets may be altered or reset: target STOPPED and no task configs (KIP-875)."""
    return target is TargetState.STOPPED and (committed_tasks or 0) == 0


def stop_incomplete_note(name: str) -> str:
    """The `trace` of a connector whose target state is STOPPED while task configs are still
    committed (a stop not written in full): not STOPPED, so its offsets cannot change yet."""
    return (
        f"Connector {name}'s target state is STOPPED but task configs are still committed, so "
        f"it is not stopped yet; PUT /connectors/{name}/stop (eosconnect stop {name}) again."
    )


def shown_status(
    name: str,
    record: StatusRecord | None,
    target: TargetState,
    committed_tasks: int | None,
    herder_id: str,
) -> StatusRecord:
    """The connector status views show: STOPPED exactly when `offsets_modifiable`; else the
    record, or what `target` implies when there is none or it is a STOPPED left from before;
    an UNASSIGNED record without a trace says that no query runs the connector."""
    generation = 0 if record is None else record.generation
    if offsets_modifiable(target, committed_tasks):
        if record is not None and record.state is StatusState.STOPPED:
            return record
        return status_without_query(name, TargetState.STOPPED, herder_id, generation)
    if record is None or record.state is StatusState.STOPPED:
        if target is TargetState.STOPPED:
            return StatusRecord(
                StatusState.UNASSIGNED, herder_id, generation, stop_incomplete_note(name)
            )
        return status_without_query(name, target, herder_id, generation)
    if record.state is StatusState.UNASSIGNED and record.trace is None:
        return replace(record, trace=no_query_note(name, target))
    return record
