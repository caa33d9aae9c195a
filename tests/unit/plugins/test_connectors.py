"""connector.class resolution: short names, aliases, Java names, dotted paths and errors."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_eos_connect.api import SinkConnector
from spark_eos_connect.connectors.file_stream import (
    FileStreamSinkConnector,
    FileStreamSourceConnector,
)
from spark_eos_connect.connectors.generator import GeneratorSourceConnector
from spark_eos_connect.errors import ConfigError, ConnectorNotFoundError
from spark_eos_connect.plugins.connectors import (
    connector_type,
    known_connectors,
    resolve_connector_class,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("FileStreamSource", FileStreamSourceConnector),
        ("FileStreamSourceConnector", FileStreamSourceConnector),
        ("org.apache.kafka.connect.file.FileStreamSourceConnector", FileStreamSourceConnector),
        ("FileStreamSink", FileStreamSinkConnector),
        ("FileStreamSinkConnector", FileStreamSinkConnector),
        ("org.apache.kafka.connect.file.FileStreamSinkConnector", FileStreamSinkConnector),
        ("Generator", GeneratorSourceConnector),
        ("GeneratorSource", GeneratorSourceConnector),
        ("GeneratorConnector", GeneratorSourceConnector),
        ("GeneratorSourceConnector", GeneratorSourceConnector),
        (" Generator ", GeneratorSourceConnector),
        (
            "spark_eos_connect.connectors.generator.GeneratorSourceConnector",
            GeneratorSourceConnector,
        ),
    ],
)
def test_short_names_aliases_and_dotted_paths(name: str, expected: type) -> None:
    assert resolve_connector_class(name) is expected


@pytest.mark.parametrize(
    ("old_path", "short"),
    [
        ("spark_eos_connect.connectors.postgres.PostgresCdcSourceConnector", "PostgresCdcSource"),
        (
            "spark_eos_connect.connectors.postgres.connector.PostgresCdcSourceConnector",
            "PostgresCdcSource",
        ),
        (
            "spark_eos_connect.connectors.postgres.sink_connector.PostgresSinkConnector",
            "PostgresSink",
        ),
    ],
)
def test_paths_of_earlier_releases_resolve_to_where_the_class_lives_now(
    old_path: str, short: str
) -> None:
    """Configs stored in the config topic before `connectors/postgres/` split by role."""
    assert resolve_connector_class(old_path) is resolve_connector_class(short)


def test_known_connectors_lists_short_names_with_paths() -> None:
    known = known_connectors()
    assert known == {
        "FileStreamSource": "spark_eos_connect.connectors.file_stream.FileStreamSourceConnector",
        "FileStreamSink": "spark_eos_connect.connectors.file_stream.FileStreamSinkConnector",
        "DeltaSink": "spark_eos_connect.delta.connector.DeltaSinkConnector",
        "Generator": "spark_eos_connect.connectors.generator.GeneratorSourceConnector",
        "PostgresCdcSource": "spark_eos_connect.connectors.postgres.cdc.PostgresCdcSourceConnector",
        "PostgresSink": (
            "spark_eos_connect.connectors.postgres.sink.connector.PostgresSinkConnector"
        ),
    }
    known["X"] = "y"
    assert "X" not in known_connectors()


@pytest.fixture
def fake_delta_module() -> Iterator[type[SinkConnector]]:
    module = types.ModuleType("spark_eos_connect.delta.connector")

    class DeltaSinkConnector(FileStreamSinkConnector):
        """Stand-in for the real Delta sink."""

    module.DeltaSinkConnector = DeltaSinkConnector  # type: ignore[attr-defined]
    saved = sys.modules.get(module.__name__)
    sys.modules[module.__name__] = module
    try:
        yield DeltaSinkConnector
    finally:
        if saved is None:
            del sys.modules[module.__name__]
        else:
            sys.modules[module.__name__] = saved


@pytest.mark.parametrize("name", ["DeltaSink", "DeltaSinkConnector"])
def test_delta_sink_resolves_lazily(name: str, fake_delta_module: type[SinkConnector]) -> None:
    assert resolve_connector_class(name) is fake_delta_module


@pytest.mark.parametrize("name", ["NoSuchThing", "FileStream", "no_such_pkg.mod.Cls", "json.Nope"])
def test_unknown_names_list_known_connectors(name: str) -> None:
    with pytest.raises(ConnectorNotFoundError) as caught:
        resolve_connector_class(name)
    message = str(caught.value)
    assert repr(name) in message
    for short in ("FileStreamSource", "FileStreamSink", "DeltaSink", "Generator"):
        assert short in message


def test_not_found_is_a_lookup_error_and_suggests_close_names() -> None:
    with pytest.raises(LookupError, match="Did you mean FileStreamSource"):
        resolve_connector_class("filestreamsource")


@pytest.mark.parametrize(
    "name",
    [
        "json.dumps",
        "spark_eos_connect.api.config.ConfigDef",
        "spark_eos_connect.api.source.SourceConnector",
    ],
)
def test_non_connector_or_abstract_is_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        resolve_connector_class(name)


@pytest.mark.parametrize("name", ["", "   "])
def test_empty_name_is_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match=r"connector\.class"):
        resolve_connector_class(name)


def test_broken_module_import_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_plugin_mod.py").write_text("import not_a_real_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConnectorNotFoundError, match="importing broken_plugin_mod failed"):
        resolve_connector_class("broken_plugin_mod.Thing")


def test_connector_type() -> None:
    assert connector_type(FileStreamSourceConnector) == "source"
    assert connector_type(FileStreamSinkConnector) == "sink"
