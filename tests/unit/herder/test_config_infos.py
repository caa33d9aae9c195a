"""`merged_config_infos`: Connect's ConfigInfos from the framework's part and a connector's."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.herder.config_infos import HIDDEN, hide_passwords, merged_config_infos


def entry(name: str, errors: list[str] | None = None, **definition: Any) -> dict[str, Any]:
    value = None if errors is None else {"name": name, "value": "v", "errors": errors}
    return {"definition": {"name": name, "type": "STRING", **definition}, "value": value}


def names(infos: dict[str, Any]) -> list[str | None]:
    return [e["definition"] and e["definition"]["name"] for e in infos["configs"]]


def test_the_connectors_options_follow_the_frameworks_in_their_order() -> None:
    framework = [entry("name", []), entry("tasks.max", ["bad"])]
    part = {"groups": ["Own"], "configs": [entry("topic", ["missing"]), entry("file")]}
    infos = merged_config_infos("C", framework, ["Common"], part)
    assert names(infos) == ["name", "tasks.max", "topic", "file"]
    assert infos["error_count"] == 2
    assert infos["groups"] == ["Common", "Own"]
    assert infos["name"] == "C"


def test_an_option_both_define_shows_the_connectors_definition_and_verdict_in_place() -> None:
    framework = [entry("name", ["framework says"]), entry("tasks.max", [])]
    part = {"configs": [entry("name", ["connector says"], group="Own")]}
    infos = merged_config_infos("C", framework, [], part)
    assert names(infos) == ["name", "tasks.max"]
    assert infos["configs"][0]["definition"]["group"] == "Own"
    assert infos["configs"][0]["value"]["errors"] == ["connector says"]
    assert infos["error_count"] == 1


def test_values_of_options_nothing_defines_come_first_with_a_null_definition() -> None:
    undefined = {"name": "extra", "value": None, "errors": ["unknown"]}
    framework_value = {"name": "name", "value": "n", "errors": ["from validate"]}
    part = {"configs": [], "undefined": [undefined, framework_value]}
    infos = merged_config_infos("C", [entry("name", [])], [], part)
    assert infos["configs"][0] == {"definition": None, "value": undefined}
    assert infos["configs"][1]["value"] == framework_value
    assert infos["error_count"] == 2


def test_a_password_value_and_default_never_show() -> None:
    secret = entry("database.password", [], type="PASSWORD", default_value="dflt")
    secret["value"]["value"] = "s3cret"
    shown = hide_passwords(secret)
    assert shown["value"]["value"] == HIDDEN and shown["definition"]["default_value"] == HIDDEN
    infos = merged_config_infos("C", [], [], {"configs": [secret]})
    assert "s3cret" not in repr(infos) and "dflt" not in repr(infos)
    unset = entry("database.password", [], type="PASSWORD", default_value=None)
    unset["value"]["value"] = None
    assert hide_passwords(unset) == unset
