"""Short and long forms of the kill campaigns in the tests.

`make test` runs every campaign's short form: enough kills to cover each kind of crash once
across the suite (a crash point `make demo`'s test or another campaign already kills at is not
repeated). `make test-failover` sets `EOSCONNECT_FAILOVER=full` and runs the long forms: every
kill of every campaign (the failover tests' three roles and driver kill, the CDC crash test's
four crash points, every crash point of the source, Delta and PostgresSink crash tests, the
driver, task host and JVM task host kills of the Java Debezium and test-plugin campaigns). One
switch for all of them.
"""

from __future__ import annotations

import os

FULL_ENV = "EOSCONNECT_FAILOVER"
"""Set to `full` for the long forms."""


def full_run() -> bool:
    """Whether this is `make test-failover`'s long form."""
    return os.environ.get(FULL_ENV, "") == "full"
