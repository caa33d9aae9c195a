"""`${provider:path:key}` references in option values (Kafka Connect's ConfigTransformer,
KIP-297/KIP-421) and the `config.providers` options that name the providers.

References are kept as they are wherever configs are stored or shipped (config topic, Spark
plans) and resolved by `ConfigProviders.resolve` in the process that uses the values.

Differences from Connect, on purpose: when `config.providers` is not set, the shipped `env`,
`file` and `directory` providers are enabled (Spark options come from the job's author, who
holds the process's rights anyway; `config.providers=` with no value turns resolution off);
`env`, `file` and `directory` need no `.class`; and a reference that cannot be resolved (unknown
provider, missing file, key or variable) is a `ConfigError` naming the option and the reference,
where Connect would leave the text as it is. Provider names are compared case-insensitively,
because Spark lower-cases option names (`config.providers.Vault.class` arrives lower-cased).
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_providers import (
    PROVIDER_CLASS_ALIASES,
    SHIPPED_PROVIDERS,
)
from spark_eos_connect.runtime.config.option_keys import lowered

PROVIDERS_OPTION: Final = "config.providers"
REFERENCE: Final = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
"""Connect's `ConfigTransformer.DEFAULT_PATTERN`: provider, optional path, key."""


def is_provider_option(name: str) -> bool:
    """Whether `name` configures the providers (`config.providers` or `config.providers.*`)."""
    lowered = name.lower()
    return lowered == PROVIDERS_OPTION or lowered.startswith(PROVIDERS_OPTION + ".")


def has_reference(value: Any) -> bool:
    """Whether `value` is a string holding at least one `${provider:[path:]key}`."""
    return isinstance(value, str) and REFERENCE.search(value) is not None


def reverse_transform(
    raw_config: Mapping[str, str], task_configs: Iterable[Mapping[str, str]]
) -> list[dict[str, str]]:
    """Task configs with every option the raw connector config holds a reference in set back
    to that reference (Connect's `AbstractHerder.reverseTransform`), so that what a connector
    copied from its resolved config is stored and shipped unresolved."""
    referenced = {key: value for key, value in raw_config.items() if has_reference(value)}
    return [
        {key: referenced.get(key, value) for key, value in config.items()}
        for config in task_configs
    ]


def load_provider_class(class_name: str, provider: str) -> type:
    """The class `config.providers.<provider>.class` names (shipped alias or dotted path)."""
    dotted = PROVIDER_CLASS_ALIASES.get(class_name, class_name)
    module_name, _, attribute = dotted.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), attribute) if module_name else None
    except (ImportError, AttributeError) as error:
        raise ConfigError(
            f"Invalid value {class_name} for configuration {PROVIDERS_OPTION}.{provider}.class: "
            f"cannot load it ({type(error).__name__}: {error})"
        ) from None
    if not isinstance(cls, type) or not callable(getattr(cls, "get", None)):
        raise ConfigError(
            f"Invalid value {class_name} for configuration {PROVIDERS_OPTION}.{provider}.class: "
            "expected a config provider class with a get(path, keys) method (a dotted Python "
            f"path, or one of {', '.join(sorted(PROVIDER_CLASS_ALIASES))})"
        )
    return cls


@dataclass(frozen=True)
class ProviderSpec:
    """One configured provider: its name, class and `param.*` settings."""

    name: str
    class_name: str
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ConfigProviders:
    """The enabled providers (picklable; shipped unresolved with plans) and the resolution."""

    specs: tuple[ProviderSpec, ...] = tuple(
        ProviderSpec(name, path) for name, path in SHIPPED_PROVIDERS.items()
    )

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ConfigProviders:
        """The providers `config.providers*` options enable (the shipped three if unset)."""
        settings = {k: str(v) for k, v in lowered(options).items() if is_provider_option(k)}
        listed = settings.pop(PROVIDERS_OPTION, None)
        names = (
            list(SHIPPED_PROVIDERS)
            if listed is None
            else [n.strip().lower() for n in listed.split(",") if n.strip()]
        )
        classes: dict[str, str] = {}
        params: dict[str, dict[str, str]] = defaultdict(dict)
        for option, value in settings.items():
            name, _, setting = option[len(PROVIDERS_OPTION) + 1 :].partition(".")
            if name not in names:
                raise ConfigError(
                    f"Option {option} configures provider {name!r}, which {PROVIDERS_OPTION} "
                    f"does not enable (enabled: {', '.join(names) or 'none'})"
                )
            if setting == "class":
                classes[name] = value
            elif setting.startswith("param.") and len(setting) > len("param."):
                params[name][setting[len("param.") :]] = value
            else:
                raise ConfigError(
                    f"Unknown option {option}: expected {PROVIDERS_OPTION}.{name}.class or "
                    f"{PROVIDERS_OPTION}.{name}.param.<name>"
                )
        specs = []
        for name in dict.fromkeys(names):
            class_name = classes.get(name) or SHIPPED_PROVIDERS.get(name)
            if class_name is None:
                raise ConfigError(
                    f"Missing option {PROVIDERS_OPTION}.{name}.class: the config provider "
                    f"{name!r} listed in {PROVIDERS_OPTION} needs a class"
                )
            load_provider_class(class_name, name)
            specs.append(ProviderSpec(name, class_name, tuple(sorted(params[name].items()))))
        return cls(tuple(specs))

    @property
    def names(self) -> list[str]:
        """The enabled providers' names."""
        return [spec.name for spec in self.specs]

    def resolve(self, values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        """`values` with every reference replaced by what its provider returns.

        Raises ConfigError naming the option (`prefix` + name) and the reference, never a
        resolved value. Without enabled providers, values are returned as they are.
        """
        wanted: dict[tuple[str, str], set[str]] = defaultdict(set)
        where: dict[tuple[str, str, str], tuple[str, str]] = {}
        for name, value in values.items():
            if not self.specs or not isinstance(value, str):
                continue
            for match in REFERENCE.finditer(value):
                provider, path, key = match.group(1).lower(), match.group(3) or "", match.group(4)
                wanted[(provider, path)].add(key)
                where.setdefault((provider, path, key), (prefix + name, match.group(0)))
        if not wanted:
            return dict(values)
        found = self._look_up(wanted, where)
        return {name: self._substituted(value, found) for name, value in values.items()}

    def _look_up(
        self,
        wanted: Mapping[tuple[str, str], set[str]],
        where: Mapping[tuple[str, str, str], tuple[str, str]],
    ) -> dict[tuple[str, str, str], str]:
        """Ask each provider once per path for its keys; every key must be answered."""
        specs = {spec.name: spec for spec in self.specs}
        found: dict[tuple[str, str, str], str] = {}
        for (provider, path), keys in sorted(wanted.items()):
            option, reference = where[(provider, path, min(keys))]
            spec = specs.get(provider)
            if spec is None:
                raise _unresolved(
                    option,
                    reference,
                    f"no config provider {provider!r} (enabled: {', '.join(self.names) or 'none'}"
                    f"; see {PROVIDERS_OPTION})",
                )
            answer = _ask(spec, path, keys, option, reference)
            for key in sorted(keys):
                if key not in answer:
                    option, reference = where[(provider, path, key)]
                    raise _unresolved(option, reference, _missing(provider, path, key))
                found[(provider, path, key)] = str(answer[key])
        return found

    @staticmethod
    def _substituted(value: Any, found: Mapping[tuple[str, str, str], str]) -> Any:
        if not isinstance(value, str):
            return value
        return REFERENCE.sub(
            lambda m: found[(m.group(1).lower(), m.group(3) or "", m.group(4))], value
        )


def _ask(
    spec: ProviderSpec, path: str, keys: set[str], option: str, reference: str
) -> Mapping[str, Any]:
    """One `get(path, keys)` of a fresh, configured provider; errors name the reference."""
    provider = load_provider_class(spec.class_name, spec.name)()
    try:
        if callable(getattr(provider, "configure", None)):
            provider.configure(dict(spec.params))
        answer = provider.get(path, set(keys))
    except ConfigError as error:
        raise _unresolved(option, reference, str(error)) from None
    except Exception as error:
        raise _unresolved(option, reference, f"{type(error).__name__}: {error}") from None
    finally:
        if callable(getattr(provider, "close", None)):
            provider.close()
    if not isinstance(answer, Mapping):
        raise _unresolved(option, reference, f"{spec.class_name}.get returned no mapping")
    return answer


def _missing(provider: str, path: str, key: str) -> str:
    if provider == "env":
        return f"environment variable {key} is not set (or not allowed)"
    if provider == "file":
        return f"{path} has no key {key}"
    if provider == "directory":
        return f"{path} has no file {key}"
    return f"provider {provider} has no key {key}" + (f" at {path}" if path else "")


def _unresolved(option: str, reference: str, reason: str) -> ConfigError:
    return ConfigError(f"Cannot resolve {reference} in option {option}: {reason}")
