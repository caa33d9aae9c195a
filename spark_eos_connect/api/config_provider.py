"""What a config provider implements (Kafka Connect's `ConfigProvider`, KIP-297).

A provider answers `${<name>:<path>:<key>}` references (or `${<name>:<key>}`, path empty) in
option values. It is named with `config.providers=<name>,...` and
`config.providers.<name>.class=<dotted.python.Class>`; `config.providers.<name>.param.<p>=<v>`
options reach `configure` as `{p: v}`. Subclassing is optional: any class with
`get(path, keys)` will do (`configure` and `close` are then skipped when missing).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Set

__all__ = ["ConfigProvider"]


class ConfigProvider(ABC):
    """Looks up configuration values (secrets) kept outside the connector configs."""

    def configure(self, params: Mapping[str, str]) -> None:  # noqa: B027 - optional hook
        """Receive the `config.providers.<name>.param.*` options (names without the prefix)."""

    @abstractmethod
    def get(self, path: str, keys: Set[str]) -> Mapping[str, str]:
        """The values of `keys` at `path` ("" for none); a missing key is simply left out."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what `configure` or `get` acquired."""
