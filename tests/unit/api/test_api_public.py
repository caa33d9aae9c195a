"""Every public name of the api and connectors packages exists and has a docstring."""

from __future__ import annotations

import importlib
import inspect

import pytest

import spark_eos_connect.api as api

MODULES = [
    "spark_eos_connect.api",
    "spark_eos_connect.api.config",
    "spark_eos_connect.api.config_provider",
    "spark_eos_connect.api.connector",
    "spark_eos_connect.api.source",
    "spark_eos_connect.api.sink",
    "spark_eos_connect.plugins.connectors",
    "spark_eos_connect.connectors.file_stream",
    "spark_eos_connect.connectors.generator",
]


@pytest.mark.parametrize("module_name", MODULES)
def test_public_names_have_docstrings(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__doc__
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not inspect.getdoc(obj):
                missing.append(name)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not inspect.isfunction(member):
                        continue
                    if not inspect.getdoc(member):
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_api_reexports_everything_in_all() -> None:
    for name in api.__all__:
        assert hasattr(api, name), name
