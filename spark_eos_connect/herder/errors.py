"""Errors of cluster actions, each carrying the HTTP status Kafka Connect answers with."""

from __future__ import annotations

from spark_eos_connect.errors import EosConnectError


class HerderError(EosConnectError):
    """A cluster action was refused; `status` is the HTTP status code for the REST API."""

    status = 500


class NotFoundError(HerderError, LookupError):
    """An unknown connector, task or status (404)."""

    status = 404


class BadRequestError(HerderError, ValueError):
    """A malformed request, an invalid config, or an action the connector's state forbids (400)."""

    status = 400


class ConflictError(HerderError):
    """The action conflicts with the cluster's current state, e.g. a pending generation (409)."""

    status = 409


class HerderTimeoutError(HerderError, TimeoutError):
    """The internal topics could not be read or written in time (500)."""

    status = 500
