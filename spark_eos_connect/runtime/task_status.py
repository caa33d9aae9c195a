"""A task's own status in the status topic (Connect's format), written from its task host.

Source and sink tasks report through the one `TaskStatusReporter`: FAILED with its trace when
a micro-batch of the task fails; RUNNING when a sink task starts (`sink.host`, as Connect
reports a task once its `start` returned) and when a Spark retry of a failed source task's
micro-batch succeeds (`source.host`). The query's driver writes the connector's status and,
leaving, keeps a FAILED task FAILED (`runtime.lifecycle.connector_owner`). Reporting is best
effort: the task's own outcome is what must surface, so a failure to write is logged, not
raised.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.config.config_references import ConfigProviders
from spark_eos_connect.runtime.lifecycle.leadership import worker_id

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskStatusReporter:
    """Where the tasks of connector `connector` report their status (plain data: built on the
    task's host from the plan the driver sent)."""

    connector: str
    status_topic: str
    """`status.storage.topic`; empty: the tasks report nothing."""
    kafka: dict[str, str] = field(repr=False)
    """The Kafka client settings, references unresolved (resolved when a status is written)."""
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    generation: int = 0
    """The generation the status records carry (the driver's, for source tasks)."""

    def report(self, task: int, state: StatusState, trace: str | None = None) -> None:
        """Best effort: task `task`'s `state` (and `trace`) in the status topic; a failure to
        write it is logged."""
        if not self.status_topic:
            return
        from spark_eos_connect.storage.status_store import KafkaStatusStore

        try:
            kafka = self.providers.resolve(self.kafka, prefix="kafka.")
            store = KafkaStatusStore(kafka, self.status_topic)
            try:
                store.put_task_status(
                    self.connector, task, state, worker_id(), self.generation, trace
                )
            finally:
                store.close()
        except Exception as error:  # the task's own outcome is what must surface
            log.warning(
                "could not record task %s-%d as %s: %s", self.connector, task, state.value, error
            )
