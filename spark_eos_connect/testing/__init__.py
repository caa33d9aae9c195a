"""Test support for pipelines and connectors, public so users can test their own: a real local
broker to restart or kill (`broker`), test connectors (`connectors`), unit-test plans (`plans`),
waiting on conditions (`waiting`), and commit hooks that crash or fail a pipeline at a chosen
point (`faults`). Production code never imports this package (`make lint` checks it).
"""

from __future__ import annotations

from spark_eos_connect.testing.broker import BrokerProcess
from spark_eos_connect.testing.connectors import (
    FAULTS_DIR_CONFIG,
    CounterSourceConnector,
    CounterSourceTask,
    FaultyGeneratorConnector,
    ScriptedTransactionsConnector,
    ScriptedTransactionsTask,
    fibonacci_transactions,
)
from spark_eos_connect.testing.plans import example_plan
from spark_eos_connect.testing.waiting import wait_for

__all__ = [
    "FAULTS_DIR_CONFIG",
    "BrokerProcess",
    "CounterSourceConnector",
    "CounterSourceTask",
    "FaultyGeneratorConnector",
    "ScriptedTransactionsConnector",
    "ScriptedTransactionsTask",
    "example_plan",
    "fibonacci_transactions",
    "wait_for",
]
