"""The shipped config providers, Kafka Connect's three (KIP-297, KIP-887, KIP-993's
`allowed.paths`), and the names they answer to.

- `EnvVarConfigProvider` (`${env:NAME}`): an environment variable of the process that resolves
  the reference. Param `allowlist.pattern` (a regex, default `.*`) limits which ones.
- `FileConfigProvider` (`${file:/path/to.properties:key}`): the key of a Java properties file.
- `DirectoryConfigProvider` (`${directory:/path:file}`): the whole content of a file in a
  directory (such as a mounted Kubernetes secret).
File and directory providers take param `allowed.paths` (comma-separated): when set, only paths
under one of them may be read. Errors never quote what was read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Set
from pathlib import Path, PurePath
from typing import Final

from spark_eos_connect.api.config_provider import ConfigProvider
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.protocol.java_properties import parse_properties

JAVA_PACKAGE: Final = "org.apache.kafka.common.config.provider"
ALLOWED_PATHS: Final = "allowed.paths"
ALLOWLIST_PATTERN: Final = "allowlist.pattern"


class _PathProvider(ConfigProvider):
    """A provider reading local paths, limited to `allowed.paths` if set."""

    def __init__(self) -> None:
        self.allowed: list[PurePath] | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        """`allowed.paths`: comma-separated absolute paths that may be read (all if unset)."""
        listed = params.get(ALLOWED_PATHS)
        if listed is None:
            return
        self.allowed = [PurePath(os.path.normpath(p.strip())) for p in listed.split(",") if p]
        relative = [str(p) for p in self.allowed if not p.is_absolute()]
        if relative:
            raise ConfigError(f"{ALLOWED_PATHS} must list absolute paths, not {relative}")

    def checked(self, path: str) -> Path:
        """`path` normalized; ConfigError if `allowed.paths` does not cover it."""
        normal = Path(os.path.normpath(path))
        if self.allowed is not None and not any(normal.is_relative_to(a) for a in self.allowed):
            raise ConfigError(f"path {path} is not under {ALLOWED_PATHS}")
        return normal


def _unreadable(path: Path, error: OSError) -> ConfigError:
    return ConfigError(f"cannot read {path}: {error.strerror or type(error).__name__}")


class FileConfigProvider(_PathProvider):
    """`${file:<properties file>:<key>}`: a value of a Java properties file (UTF-8)."""

    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        """The `keys` present in the properties file `path`."""
        if not path:
            return {}
        file = self.checked(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as error:
            raise _unreadable(file, error) from None
        except UnicodeDecodeError:
            raise ConfigError(f"{file} is not UTF-8 text") from None
        entries = parse_properties(text, str(file))
        return {key: entries[key] for key in keys if key in entries}


class DirectoryConfigProvider(_PathProvider):
    """`${directory:<directory>:<file name>}`: the content of a file in the directory."""

    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        """The content of each regular file of `path` named in `keys`."""
        if not path:
            return {}
        folder = self.checked(path)
        if not folder.is_dir():
            raise ConfigError(f"{folder} is not a readable directory")
        values = {}
        for key in keys:
            file = folder / key
            if key in ("", ".", "..") or os.sep in key or not file.is_file():
                continue
            try:
                values[key] = file.read_text(encoding="utf-8")
            except OSError as error:
                raise _unreadable(file, error) from None
            except UnicodeDecodeError:
                raise ConfigError(f"{file} is not UTF-8 text") from None
        return values


class EnvVarConfigProvider(ConfigProvider):
    """`${env:<NAME>}`: an environment variable (no path)."""

    def __init__(self) -> None:
        self.allowlist = re.compile(".*")

    def configure(self, params: Mapping[str, str]) -> None:
        """`allowlist.pattern`: a regex the whole variable name must match (default `.*`)."""
        pattern = params.get(ALLOWLIST_PATTERN)
        if pattern is None:
            return
        try:
            self.allowlist = re.compile(pattern)
        except re.error as error:
            raise ConfigError(f"{ALLOWLIST_PATTERN} is not a valid regex: {error}") from None

    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        """The variables named in `keys` that are set and allowed."""
        if path:
            raise ConfigError(f"the env provider takes no path (got {path!r})")
        return {
            key: os.environ[key]
            for key in keys
            if key in os.environ and self.allowlist.fullmatch(key) is not None
        }


def _path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


SHIPPED_PROVIDERS: Final[dict[str, str]] = {
    "env": _path(EnvVarConfigProvider),
    "file": _path(FileConfigProvider),
    "directory": _path(DirectoryConfigProvider),
}
"""Provider name -> class of the providers enabled when `config.providers` is not set."""

PROVIDER_CLASS_ALIASES: Final[dict[str, str]] = {
    alias: _path(cls)
    for cls in (EnvVarConfigProvider, FileConfigProvider, DirectoryConfigProvider)
    for alias in (cls.__name__, f"{JAVA_PACKAGE}.{cls.__name__}")
}
"""Connect's Java class names and their simple names -> the shipped Python classes."""
