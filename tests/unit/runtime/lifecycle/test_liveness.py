"""`runtime.lifecycle.liveness`: who owns a connector, and when that owner counts as gone."""

from __future__ import annotations

import os
import threading

from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.runtime.lifecycle.liveness import (
    LIVENESS_S,
    Heartbeat,
    Owner,
    other_owner,
    pid_alive,
    process_gone,
    still_there,
)


def test_only_another_driver_running_or_pausing_the_connector_owns_it() -> None:
    running = StatusRecord(StatusState.RUNNING, "h:1", 3)

    assert other_owner(running, 1000, "h:2") == Owner("h:1", StatusState.RUNNING, 1000)
    assert other_owner(running, 1000, "h:1") is None  # this driver itself
    assert other_owner(StatusRecord(StatusState.UNASSIGNED, "h:1", 3), 1000, "h:2") is None
    assert other_owner(None, None, "h:2") is None


def test_a_status_a_herder_wrote_is_no_drivers_claim() -> None:
    """The REST API's herder writes PAUSED for a connector no query runs: a query starting it
    must not wait for that status to lapse."""
    paused = StatusRecord(StatusState.PAUSED, "h:eosconnect-herder", 0, "No Spark query runs")

    assert other_owner(paused, 1000, "h:2") is None


def test_an_owner_lapses_after_the_liveness_bound() -> None:
    owner = Owner("h:1", StatusState.RUNNING, 10_000)

    assert not owner.lapsed(10_000 + int(LIVENESS_S * 1000) - 1)
    assert owner.lapsed(10_000 + int(LIVENESS_S * 1000))


def test_a_process_gone_counts_only_on_this_host() -> None:
    assert process_gone("here:123", "here", alive=lambda pid: False)
    assert not process_gone("here:123", "here", alive=lambda pid: True)
    assert not process_gone("there:123", "here", alive=lambda pid: False)
    assert pid_alive(os.getpid())


def test_a_newer_record_of_the_same_owner_is_a_heartbeat() -> None:
    owner = Owner("h:1", StatusState.RUNNING, 1000)

    assert still_there(owner, Owner("h:1", StatusState.RUNNING, 6000))
    assert not still_there(owner, Owner("h:1", StatusState.RUNNING, 1000))
    assert not still_there(owner, Owner("h:9", StatusState.RUNNING, 6000))


def test_the_heartbeat_beats_until_stopped() -> None:
    beats = threading.Semaphore(0)
    heartbeat = Heartbeat(beats.release, every_s=0.01).start()

    assert beats.acquire(timeout=10) and beats.acquire(timeout=10)
    heartbeat.stop()
    while beats.acquire(blocking=False):
        pass
    assert not beats.acquire(timeout=0.1)
