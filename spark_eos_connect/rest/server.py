"""Run the REST API with uvicorn (``eosconnect rest``)."""

from __future__ import annotations

import logging

import uvicorn

from spark_eos_connect.herder import Herder
from spark_eos_connect.rest.app import create_app
from spark_eos_connect.rest.auth import BasicAuth
from spark_eos_connect.rest.guards import DEFAULT_MAX_REQUEST_BYTES
from spark_eos_connect.rest.listen import TlsFiles, check_exposure

DEFAULT_PORT = 8083

log = logging.getLogger(__name__)


def serve(
    herder: Herder,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    tls: TlsFiles | None = None,
    auth: BasicAuth | None = None,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> None:
    """Serve the API (HTTPS with `tls`, basic authentication with `auth`, bodies of at most
    `max_request_bytes`) until SIGINT/SIGTERM; the herder is closed afterwards. A non-loopback
    `host` needs `tls` or `auth`."""
    try:
        for warning in check_exposure(host, tls is not None, auth is not None):
            log.warning(warning)
        if tls is not None:
            tls.check()
        config = uvicorn.Config(
            create_app(herder, auth=auth, max_request_bytes=max_request_bytes),
            host=host,
            port=port,
            log_level="info",
            ssl_certfile=tls.certfile if tls else None,
            ssl_keyfile=tls.keyfile if tls else None,
            ssl_keyfile_password=tls.password if tls else None,
        )
        uvicorn.Server(config).run()
    finally:
        herder.close()
