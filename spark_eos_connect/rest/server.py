"""Run the REST API with uvicorn (``eosconnect rest``)."""

from __future__ import annotations

import uvicorn

from spark_eos_connect.herder import Herder
from spark_eos_connect.rest.app import create_app

DEFAULT_PORT = 8083


def serve(herder: Herder, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
    """Serve the API until SIGINT/SIGTERM; the herder is closed afterwards."""
    config = uvicorn.Config(create_app(herder), host=host, port=port, log_level="info")
    try:
        uvicorn.Server(config).run()
    finally:
        herder.close()
