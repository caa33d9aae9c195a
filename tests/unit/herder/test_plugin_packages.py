"""connector.class names from requests: only shipped connectors and classes in plugin.packages;
no other module is imported, whatever the name (issue 27)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_eos_connect.connectors.generator import GeneratorSourceConnector
from spark_eos_connect.errors import ConfigError, ConnectorNotFoundError
from spark_eos_connect.herder import BadRequestError, WorkerSettings
from spark_eos_connect.herder.plugins import Plugins, plugin_packages
from spark_eos_connect.plugins.connectors import resolve_plugin_class

PACKAGE = "eosconnect_i27_plugins"
CONNECTOR = """
from pathlib import Path
from spark_eos_connect.connectors.generator import GeneratorSourceConnector

Path(__file__).with_name("imported").touch()


class Mine(GeneratorSourceConnector):
    pass
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package on sys.path whose module ``good`` leaves a file ``imported`` when imported and
    whose module ``broken`` raises while it loads."""
    package = tmp_path / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "good.py").write_text(CONNECTOR)
    (package / "broken.py").write_text("raise RuntimeError('plugin exploded')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.mark.parametrize(
    "name",
    [
        f"{PACKAGE}.good.Mine",
        "this.X",
        "os.system",
        "../x",
        "..x.Y",
        "a..b",
        "x.",
        "class.X",
        "a b.C",
        "\u2713.X",
        "spark_eos_connect.testing.CounterSourceConnector",
    ],
)
def test_names_outside_the_allow_list_are_400_and_import_nothing(
    plugin_dir: Path, name: str
) -> None:
    before = set(sys.modules)
    with pytest.raises(BadRequestError, match="not found") as caught:
        Plugins().load({"connector.class": name})
    assert set(sys.modules) == before
    assert not (plugin_dir / "imported").exists()
    assert repr(name) in str(caught.value)


def test_the_message_names_the_option_and_the_package_to_add(plugin_dir: Path) -> None:
    with pytest.raises(BadRequestError) as caught:
        Plugins(("other",)).load({"connector.class": f"{PACKAGE}.good.Mine"})
    message = str(caught.value)
    assert "plugin.packages" in message and "(other)" in message
    assert f"add its package (e.g. {PACKAGE})" in message
    for short in ("FileStreamSource", "Generator"):
        assert short in message


def test_a_listed_package_loads_its_connectors(plugin_dir: Path) -> None:
    connector = Plugins((PACKAGE,)).load({"connector.class": f"{PACKAGE}.good.Mine"})
    assert isinstance(connector, GeneratorSourceConnector)
    assert (plugin_dir / "imported").exists()
    with pytest.raises(BadRequestError, match=r"plugin\.packages"):  # a prefix is not a package
        Plugins((PACKAGE[:-1],)).load({"connector.class": f"{PACKAGE}.good.Mine"})


def test_a_listed_module_failing_to_load_is_400(plugin_dir: Path) -> None:
    with pytest.raises(BadRequestError, match="RuntimeError: plugin exploded"):
        Plugins((PACKAGE,)).load({"connector.class": f"{PACKAGE}.broken.Mine"})
    with pytest.raises(BadRequestError, match="not a subclass"):
        Plugins((PACKAGE,)).load({"connector.class": f"{PACKAGE}.good.Path"})


@pytest.mark.parametrize(
    "name",
    [
        "Generator",
        " GeneratorSourceConnector ",
        "spark_eos_connect.connectors.generator.GeneratorSourceConnector",
    ],
)
def test_shipped_connectors_need_no_package(name: str) -> None:
    assert resolve_plugin_class(name, ()) is GeneratorSourceConnector


def test_validate_refuses_an_unlisted_plugin_name(plugin_dir: Path) -> None:
    with pytest.raises(BadRequestError, match=r"plugin\.packages"):
        Plugins().validate(f"{PACKAGE}.good.Mine", {"topic": "t"})
    with pytest.raises(BadRequestError, match="not found"):
        Plugins().validate("Generator", {"connector.class": "this.X", "topic": "t"})
    assert not (plugin_dir / "imported").exists()


def test_resolve_connector_class_refuses_paths_that_are_no_python_names() -> None:
    for name in ("../x", "a..b", "x.", ".x"):
        with pytest.raises(ConnectorNotFoundError):
            resolve_plugin_class(name, ("x", "a"))


def test_plugin_packages_option() -> None:
    assert plugin_packages(" a, b.c ,,") == ("a", "b.c")
    assert plugin_packages(["a", "b,c", "a"]) == ("a", "b", "c")
    assert WorkerSettings.from_options({"plugin.packages": "x.y,z"}).plugin_packages == (
        "x.y",
        "z",
    )
    assert WorkerSettings().plugin_packages == ()
    for bad in ("../x", "a/b", "a..b", "import"):
        with pytest.raises(ConfigError, match=r"plugin\.packages"):
            WorkerSettings(plugin_packages=(bad,))
