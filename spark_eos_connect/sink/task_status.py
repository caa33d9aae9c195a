"""A sink task's own status in the status topic (Connect's format), written from its host.

Sink tasks report as source tasks do (`source.host.report_task_status`): RUNNING when a task
starts, FAILED with its trace when a micro-batch of it fails. The query's driver, leaving,
keeps a FAILED task FAILED and reports the connector FAILED (`sink.lifecycle`). The task host
calls `report_sink_task_status` around `LiveSinkTask.run_batch` (`sink.host`).
"""

from __future__ import annotations

import logging

from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.lifecycle.leadership import worker_id
from spark_eos_connect.sink.plan import SinkTaskPlan

log = logging.getLogger(__name__)


def report_sink_task_status(
    plan: SinkTaskPlan, task: int, state: StatusState, trace: str | None = None
) -> None:
    """Best effort: task `task`'s state (and trace); a failure to write it is logged."""
    from spark_eos_connect.storage.status_store import KafkaStatusStore

    try:
        store = KafkaStatusStore(plan.resolved_kafka(), plan.status_topic)
        try:
            store.put_task_status(plan.connector, task, state, worker_id(), 0, trace)
        finally:
            store.close()
    except Exception as error:  # the task's own outcome is what must surface
        log.warning("could not record sink task %d as %s: %s", task, state.value, error)
