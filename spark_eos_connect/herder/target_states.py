"""`TargetStates`: pause, resume and stop, written to the config topic as target states
(``target-state-<name>``); a running query reacts to them, and while none runs the connector
the herder writes the status each implies (`without_query`)."""

from __future__ import annotations

from dataclasses import dataclass

from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.connector_statuses import ConnectorStatuses
from spark_eos_connect.ports import ConfigWriter
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState


@dataclass(eq=False)
class TargetStates:
    """Target states in `config_topic`, statuses through `statuses`."""

    config_topic: ConfigTopic
    statuses: ConnectorStatuses

    def pause(self, name: str) -> None:
        """``PUT .../pause``: target state PAUSED (also for a stopped connector); without a
        running query the status becomes PAUSED (`without_query`)."""
        self._set_target(name, TargetState.PAUSED)

    def resume(self, name: str) -> None:
        """``PUT .../resume``: target state STARTED; the running query brings tasks back;
        without one the status becomes UNASSIGNED, saying so (`without_query`)."""
        self._set_target(name, TargetState.STARTED)

    def _set_target(self, name: str, state: TargetState) -> None:
        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self.config_topic.connector_config(snapshot, name)
            leader.put_target_state(name, state)
            self.statuses.report_without_query(snapshot, name, state)

        self.config_topic.write(action)

    def stop(self, name: str) -> None:
        """``PUT .../stop``: status STOPPED, then empty task set and target STOPPED (idempotent).

        The status comes first, so that a running query, which reports STOPPED under its own
        worker id once it sees the target state, writes the last status and keeps owning the
        connector; an already STOPPED status is left as it is.
        """

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self.config_topic.connector_config(snapshot, name)
            previous = self.statuses.mark_stopped(snapshot, name)
            try:
                leader.stop_connector(name)
            except Exception:
                self.statuses.restore(name, previous)
                raise

        self.config_topic.write(action)
        self.statuses.clear(name, delete_connector=False)
