"""A Generator that checks, on the driver and in its tasks, that `api.token` arrived resolved:
its SHA-256 must equal `api.token.sha256`. Imported by Spark's Python processes."""

from __future__ import annotations

import hashlib

from spark_eos_connect.connectors.generator import GeneratorSourceConnector, GeneratorSourceTask
from spark_eos_connect.errors import ConfigError


def check_token(props: dict[str, str], who: str) -> None:
    """Raise (without showing the value) unless `api.token` hashes to `api.token.sha256`."""
    digest = hashlib.sha256(props.get("api.token", "").encode()).hexdigest()
    if digest != props.get("api.token.sha256"):
        raise ConfigError(f"the {who} got api.token unresolved or wrong")


class TokenCheckingTask(GeneratorSourceTask):
    """A generator task that checks its token first."""

    def start(self, props: dict[str, str]) -> None:
        """Check `api.token`, then generate."""
        check_token(props, "task")
        super().start(props)


class TokenCheckingSource(GeneratorSourceConnector):
    """A generator connector that checks its token first."""

    def start(self, props: dict[str, str]) -> None:
        """Check `api.token`, then split the work."""
        check_token(props, "connector")
        super().start(props)

    def task_class(self) -> type[TokenCheckingTask]:
        """`TokenCheckingTask`."""
        return TokenCheckingTask
