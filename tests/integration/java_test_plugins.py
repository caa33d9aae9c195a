"""This project's own Java Connect plugins for the tests (java/test-plugins), which `make setup`
builds into one plugin folder: their classes and where that folder is."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.jvm import jars

PACKAGE = "io.github.sparkeosconnect.testplugins"
SCRIPTED = f"{PACKAGE}.ScriptedTransactionsSourceConnector"
"""Defines its own transactions: numbered records, some transactions aborted."""
FAILING = f"{PACKAGE}.FailingSourceConnector"
"""Throws where `fail.in` says (validate, start, taskConfigs, task.start), else writes `values`."""
FAILING_TASK = f"{PACKAGE}.FailingSourceTask"
REFUSING_CONVERTER = f"{PACKAGE}.RefusingConverter"
"""Writes a value as its text, but refuses the one its option `refuse` names."""


def plugin_folder() -> Path:
    """The plugin folder `make setup` builds java/test-plugins into (a missing jar fails)."""
    folder = jars.cache_root() / "test-plugins" / "eos-test-plugins"
    if not any(folder.glob("*.jar")):
        pytest.fail(f"{folder} holds no jar: run `make setup`, which builds java/test-plugins")
    return folder
