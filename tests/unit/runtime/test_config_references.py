"""`${provider:path:key}` references: `config.providers` options, resolution, errors."""

from __future__ import annotations

from collections.abc import Mapping, Set
from pathlib import Path

import pytest

from spark_eos_connect.api.config_provider import ConfigProvider
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_references import (
    REFERENCE,
    ConfigProviders,
    ProviderSpec,
    has_reference,
    is_provider_option,
    reverse_transform,
)

SECRET = "s3cr3t-planted-value"


class VaultProvider(ConfigProvider):
    """A user's provider: answers `${vault:<path>:<key>}` with `<path>/<key>@<prefix>`."""

    calls: list[tuple[str, set[str]]] = []
    closed = 0

    def configure(self, params: Mapping[str, str]) -> None:
        self.prefix = params.get("prefix", "")

    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        VaultProvider.calls.append((path, set(keys)))
        return {key: f"{path}/{key}@{self.prefix}" for key in keys if key != "absent"}

    def close(self) -> None:
        VaultProvider.closed += 1


class DuckProvider:
    """Any class with `get(path, keys)` will do."""

    def get(self, path: str, keys: Set[str]) -> dict[str, str]:
        return {key: key.upper() for key in keys}


class BrokenProvider(ConfigProvider):
    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        raise RuntimeError("vault unreachable")


VAULT = f"{__name__}.VaultProvider"


@pytest.fixture
def secrets_file(tmp_path: Path) -> Path:
    file = tmp_path / "secrets.properties"
    file.write_text(f"password={SECRET}\nuser=app\n")
    return file


def test_pattern_is_connects() -> None:
    match = REFERENCE.fullmatch("${file:/etc/x.properties:key}")
    assert match is not None and match.group(1, 3, 4) == ("file", "/etc/x.properties", "key")
    match = REFERENCE.fullmatch("${env:NAME}")
    assert match is not None and match.group(1, 3, 4) == ("env", None, "NAME")
    assert has_reference("jdbc:${env:A}") and not has_reference("${plain}")
    assert not has_reference(None) and not has_reference(5)


def test_provider_options() -> None:
    assert is_provider_option("config.providers")
    assert is_provider_option("config.providers.file.class")
    assert is_provider_option("Config.Providers.Vault.param.x")
    assert not is_provider_option("config.providersx") and not is_provider_option("name")


def test_defaults_enable_env_file_directory() -> None:
    providers = ConfigProviders.from_options({"name": "x"})
    assert providers.names == ["env", "file", "directory"]
    assert providers == ConfigProviders()


def test_resolves_file_env_directory_and_several_references_per_value(
    secrets_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOS_TEST_USER", "alice")
    (tmp_path / "token").write_text("tok")
    values = {
        "password": f"${{file:{secrets_file}:password}}",
        "url": f"db://${{env:EOS_TEST_USER}}:${{file:{secrets_file}:password}}@h",
        "token": f"${{directory:{tmp_path}:token}}",
        "plain": "no references",
        "braces": "${not-a-reference}",
    }

    resolved = ConfigProviders().resolve(values)

    assert resolved == {
        "password": SECRET,
        "url": f"db://alice:{SECRET}@h",
        "token": "tok",
        "plain": "no references",
        "braces": "${not-a-reference}",
    }
    assert values["password"].startswith("${file:")  # the input is left as it was


def test_values_without_references_pass_untouched() -> None:
    values = {"a": "1", "b": 2}
    assert ConfigProviders().resolve(values) == values


def test_connect_configuration_names_and_java_class_names(secrets_file: Path) -> None:
    providers = ConfigProviders.from_options(
        {
            "config.providers": "file",
            "config.providers.file.class": (
                "org.apache.kafka.common.config.provider.FileConfigProvider"
            ),
            "config.providers.file.param.allowed.paths": str(secrets_file.parent),
        }
    )
    assert providers.specs == (
        ProviderSpec(
            "file",
            "org.apache.kafka.common.config.provider.FileConfigProvider",
            (("allowed.paths", str(secrets_file.parent)),),
        ),
    )
    assert providers.resolve({"p": f"${{file:{secrets_file}:user}}"}) == {"p": "app"}
    with pytest.raises(ConfigError, match=r"Cannot resolve \$\{file:/etc/hosts:x\} in option p"):
        providers.resolve({"p": "${file:/etc/hosts:x}"})


def test_explicit_list_replaces_the_defaults() -> None:
    providers = ConfigProviders.from_options({"config.providers": "env"})
    assert providers.names == ["env"]
    with pytest.raises(ConfigError, match=r"\$\{file:/x:k\} in option kafka.p: no config provider"):
        providers.resolve({"p": "${file:/x:k}"}, prefix="kafka.")


def test_empty_list_turns_resolution_off() -> None:
    providers = ConfigProviders.from_options({"config.providers": ""})
    assert providers.names == []
    assert providers.resolve({"p": "${file:/x:k}"}) == {"p": "${file:/x:k}"}


def test_user_provider_with_params_one_get_per_path_and_close() -> None:
    VaultProvider.calls.clear()
    VaultProvider.closed = 0
    providers = ConfigProviders.from_options(
        {
            "config.providers": "Vault,env",
            "config.providers.vault.class": VAULT,
            "config.providers.vault.param.prefix": "p1",
        }
    )

    resolved = providers.resolve({"a": "${vault:db:user}", "b": "${VAULT:db:pw}/${vault:x}"})

    assert resolved == {"a": "db/user@p1", "b": "db/pw@p1//x@p1"}
    assert sorted(VaultProvider.calls, key=lambda c: c[0]) == [("", {"x"}), ("db", {"pw", "user"})]
    assert VaultProvider.closed == 2


def test_duck_typed_provider() -> None:
    providers = ConfigProviders.from_options(
        {"config.providers": "duck", "config.providers.duck.class": f"{__name__}.DuckProvider"}
    )
    assert providers.resolve({"a": "${duck:k}"}) == {"a": "K"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"config.providers": "vault"}, "Missing option config.providers.vault.class"),
        (
            {"config.providers": "v", "config.providers.v.class": "no.such.Provider"},
            "Invalid value no.such.Provider for configuration config.providers.v.class",
        ),
        (
            {"config.providers": "v", "config.providers.v.class": "builtins.list"},
            "expected a config provider class",
        ),
        ({"config.providers.vault.class": VAULT}, "which config.providers does not enable"),
        ({"config.providers.file.typo": "x"}, "Unknown option config.providers.file.typo"),
    ],
)
def test_bad_provider_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ConfigProviders.from_options(options)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("${file:{dir}/missing.properties:password}", "cannot read .*No such file"),
        ("${file:{file}:absent}", "has no key absent"),
        ("${env:EOS_SURELY_UNSET_VARIABLE}", "environment variable .* is not set"),
        ("${directory:{dir}:absent}", "has no file absent"),
        ("${nope:x}", "no config provider 'nope' \\(enabled: env, file, directory"),
    ],
)
def test_bad_references_name_option_and_reference_never_the_secret(
    secrets_file: Path, value: str, reason: str
) -> None:
    reference = value.replace("{dir}", str(secrets_file.parent)).replace(
        "{file}", str(secrets_file)
    )
    with pytest.raises(ConfigError) as raised:
        ConfigProviders().resolve({"ok": f"${{file:{secrets_file}:password}}", "bad": reference})

    message = str(raised.value)
    assert message.startswith(f"Cannot resolve {reference} in option bad: ")
    assert raised.match(reason)
    assert SECRET not in message and raised.value.__cause__ is None


def test_provider_failure_is_wrapped_with_the_reference() -> None:
    providers = ConfigProviders.from_options(
        {"config.providers": "b", "config.providers.b.class": f"{__name__}.BrokenProvider"}
    )
    with pytest.raises(ConfigError, match=r"\$\{b:k\} in option x: RuntimeError: vault unreach"):
        providers.resolve({"x": "${b:k}"})


def test_reverse_transform_puts_references_back_by_option_name() -> None:
    raw = {"password": "${file:/s:pw}", "topic": "t", "url": "x${env:U}"}
    tasks = [
        {"password": SECRET, "topic": "t", "task": "0"},
        {"password": SECRET, "url": "xu", "task": "1"},
    ]

    assert reverse_transform(raw, tasks) == [
        {"password": "${file:/s:pw}", "topic": "t", "task": "0"},
        {"password": "${file:/s:pw}", "url": "x${env:U}", "task": "1"},
    ]


def test_providers_pickle_as_plain_settings() -> None:
    import pickle

    providers = ConfigProviders.from_options(
        {"config.providers": "vault", "config.providers.vault.class": VAULT}
    )
    assert pickle.loads(pickle.dumps(providers)) == providers
