"""The herder's pure pieces: response shapes, messages, secrets, config checks, settings."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.config import HIDDEN, ConfigDef, ConfigType
from spark_eos_connect.herder import BadRequestError, WorkerSettings
from spark_eos_connect.herder.entities import modified_message, restart_plan, state_entry
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.runtime.config.secret_names import is_secret, masked

SHIPPED = Plugins()
RUNNING = StatusRecord(StatusState.RUNNING, "w1", 1)
FAILED = StatusRecord(StatusState.FAILED, "w2", 1, "Traceback ...")


def test_messages_use_connects_two_wordings() -> None:
    assert modified_message(True, reset=False) == (
        "The offsets for this connector have been altered successfully"
    )
    assert modified_message(True, reset=True) == (
        "The offsets for this connector have been reset successfully"
    )
    assert modified_message(False, reset=True) == (
        "The Connect framework-managed offsets for this connector have been reset successfully. "
        "However, if this connector manages offsets externally, they will need to be manually "
        "reset in the system that the connector uses."
    )


def test_state_entries_show_trace_only_when_set() -> None:
    assert state_entry(RUNNING) == {"state": "RUNNING", "worker_id": "w1"}
    assert state_entry(FAILED)["trace"] == "Traceback ..."
    assert state_entry(None) == {"state": "UNASSIGNED", "worker_id": None}


@pytest.mark.parametrize(
    ("include_tasks", "only_failed", "connector", "tasks"),
    [
        (False, False, "RESTARTING", ["RUNNING", "FAILED"]),
        (True, False, "RESTARTING", ["RESTARTING", "RESTARTING"]),
        (True, True, "RUNNING", ["RUNNING", "RESTARTING"]),
        (False, True, "RUNNING", ["RUNNING", "FAILED"]),
    ],
)
def test_restart_plans_follow_kip_745(
    include_tasks: bool, only_failed: bool, connector: str, tasks: list[str]
) -> None:
    plan = restart_plan("c", RUNNING, {0: RUNNING, 1: FAILED}, "source", include_tasks, only_failed)
    assert plan["connector"]["state"] == connector
    assert [t["state"] for t in plan["tasks"]] == tasks


def test_secrets_are_masked_by_type_or_name() -> None:
    definition = ConfigDef().define("db.credential", ConfigType.PASSWORD, None)
    props = {
        "db.credential": "p1",
        "kafka.sasl.jaas.config": "p2",
        "ssl.key.password": "p3",
        "api.secret": "p4",
        "topic": "t",
        "empty.password": None,
    }
    assert masked(props, [definition]) == {
        "db.credential": HIDDEN,
        "kafka.sasl.jaas.config": HIDDEN,
        "ssl.key.password": HIDDEN,
        "api.secret": HIDDEN,
        "topic": "t",
        "empty.password": None,
    }
    assert not is_secret("db.credential")
    assert is_secret("db.credential", [definition])


def test_unknown_connector_class_lists_the_known_ones() -> None:
    with pytest.raises(BadRequestError, match=r"FileStreamSource.*Generator"):
        SHIPPED.load({"connector.class": "com.example.Missing"})
    with pytest.raises(BadRequestError, match=r"connector.class"):
        SHIPPED.load({})


def test_check_config_reports_every_error() -> None:
    with pytest.raises(BadRequestError, match=r"3 error\(s\)") as raised:
        SHIPPED.check_config({"connector.class": "FileStreamSource", "name": "n", "tasks.max": "0"})
    for name in ("file", "topic", "tasks.max"):
        assert name in str(raised.value)


def test_kind_falls_back_on_topics_for_classes_that_do_not_resolve() -> None:
    assert SHIPPED.kind_of({"connector.class": "FileStreamSink"}) == "sink"
    assert SHIPPED.kind_of({"connector.class": "io.confluent.Jdbc", "topics": "a"}) == "sink"
    assert SHIPPED.kind_of({"connector.class": "io.confluent.Jdbc"}) == "source"


def test_validate_config_has_connects_shape() -> None:
    infos = SHIPPED.validate("FileStreamSink", {"topics": "a,b", "name": "s"})
    assert infos["name"] == "spark_eos_connect.connectors.file_stream.FileStreamSinkConnector"
    assert infos["error_count"] == 0
    by_name = {c["definition"]["name"]: c for c in infos["configs"]}
    assert by_name["topics"]["definition"]["type"] == "LIST"
    assert by_name["topics"]["value"]["value"] == "a,b"
    assert by_name["tasks.max"]["definition"]["default_value"] == "1"
    assert by_name["name"]["definition"]["group"] == "Common"


def test_worker_settings_from_options() -> None:
    settings = WorkerSettings.from_options(
        {
            "group.id": "prod",
            "offset.storage.topic": "connect-offsets",
            "exactly.once.source.support": "disabled",
            "offset.storage.replication.factor": "2",
            "kafka.bootstrap.servers": "ignored:1",
        }
    )
    assert settings.group_id == "prod"
    assert settings.topics.offsets_replication == 2
    assert settings.topics.config_replication is None  # left at Connect's default
    assert settings.offsets_topic == "connect-offsets"
    assert settings.config_topic == "eosconnect-configs"
    assert settings.exactly_once is False
