"""Kafka Connect's REST API over a `Herder` (FastAPI); `create_app` builds it, `serve` runs it."""

from __future__ import annotations

from spark_eos_connect.rest.app import create_app
from spark_eos_connect.rest.server import serve

__all__ = ["create_app", "serve"]
