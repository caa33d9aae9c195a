"""The project's error hierarchy: every error raised on purpose derives from `EosConnectError`."""

from __future__ import annotations


class EosConnectError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(EosConnectError, ValueError):
    """A configuration is invalid; the message names the option and what was expected."""


class ConnectorNotFoundError(EosConnectError, LookupError):
    """A connector class or a named connector does not exist."""


class SetupError(EosConnectError, RuntimeError):
    """A local prerequisite (Java, Maven, jars, a broker) is missing or failed to start."""


class DataError(EosConnectError, ValueError):
    """A value does not match its schema (Connect's `DataException`); the message says where."""


class RetriableError(EosConnectError):
    """A failure that may succeed if tried again (Connect's `RetriableException`).

    A transformation or converter raising it is retried within `errors.retry.timeout`; any other
    error fails the record at once.
    """
