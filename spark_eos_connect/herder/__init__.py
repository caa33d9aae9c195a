"""Cluster actions (Connect's `Herder`) over the internal topics; REST and CLI wrap them."""

from __future__ import annotations

from spark_eos_connect.herder.core import Herder, WorkerSettings
from spark_eos_connect.herder.errors import (
    BadRequestError,
    ConflictError,
    HerderError,
    HerderTimeoutError,
    NotFoundError,
)

__all__ = [
    "BadRequestError",
    "ConflictError",
    "Herder",
    "HerderError",
    "HerderTimeoutError",
    "NotFoundError",
    "WorkerSettings",
]
