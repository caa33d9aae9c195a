"""`connector_requests`: a request's connector name, config and initial state, checked (pure)."""

from __future__ import annotations

import pytest

from spark_eos_connect.herder import BadRequestError
from spark_eos_connect.herder.connector_requests import check_name, config_strings, initial_target
from spark_eos_connect.protocol.config_records import TargetState


def test_config_values_become_strings() -> None:
    assert config_strings({"a": 1, "b": True, "c": None, "d": "x", "e": 1.5}) == {
        "a": "1",
        "b": "true",
        "c": None,
        "d": "x",
        "e": "1.5",
    }
    with pytest.raises(BadRequestError, match="'l' must be a string"):
        config_strings({"l": [1]})
    with pytest.raises(BadRequestError, match="JSON object"):
        config_strings(["a"])


def test_names_are_trimmed_and_must_fit_one_url_segment() -> None:
    assert check_name("  src ") == "src"
    for bad, match in [
        ("", "non-empty"),
        (3, "non-empty"),
        ("a\tb", "control characters"),
        ("a/b", "must not contain '/'"),
        ("..", "must not contain '/'"),
        ("\ud800", "lone surrogate"),
    ]:
        with pytest.raises(BadRequestError, match=match):
            check_name(bad)


def test_initial_states_name_target_states_in_any_case() -> None:
    assert initial_target(None) is None
    assert initial_target("running") is TargetState.STARTED
    assert initial_target("PAUSED") is TargetState.PAUSED
    assert initial_target("Stopped") is TargetState.STOPPED
    with pytest.raises(BadRequestError, match="one of RUNNING, PAUSED, STOPPED, got 'GONE'"):
        initial_target("GONE")
