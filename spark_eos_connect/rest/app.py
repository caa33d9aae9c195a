"""Kafka Connect's REST paths, bodies and status codes, as thin wrappers over a `Herder`.

Every error answers ``{"error_code": N, "message": "..."}``: the herder's refusals with their
status (404, 400, 409, 500), malformed requests with 400, a body that is not JSON with 415, one
larger than ``rest.max.request.bytes`` with 413 (before it is parsed), unknown paths with 404.
Bodies are parsed in worker threads, never on the event loop; HEAD answers as GET without a
body; a trailing slash is routed as the path without it.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.herder import BadRequestError, Herder, HerderError
from spark_eos_connect.protocol import _json
from spark_eos_connect.rest.auth import BasicAuth, BasicAuthMiddleware
from spark_eos_connect.rest.bodies import ConnectJSONResponse, parse_json, require_json
from spark_eos_connect.rest.guards import (
    DEFAULT_MAX_REQUEST_BYTES,
    BodyLimitMiddleware,
    HeadAndSlashMiddleware,
)
from spark_eos_connect.version import __version__

log = logging.getLogger(__name__)


class CreateConnectorRequest(BaseModel):
    """``POST /connectors`` body."""

    name: str = Field(description="The connector's unique name.")
    config: dict[str, Any] = Field(description="Its configuration (string values).")
    initial_state: str | None = Field(
        None, description="RUNNING (default), PAUSED or STOPPED (KIP-980)."
    )


class ConnectorOffset(BaseModel):
    """One partition and its offset; a null offset resets the partition."""

    partition: dict[str, Any] | None = Field(
        description='A source partition, or {"kafka_topic":t,"kafka_partition":p} for sinks.'
    )
    offset: dict[str, Any] | None = Field(
        None, description='A source offset, {"kafka_offset":n} for sinks, or null.'
    )


class ConnectorOffsets(BaseModel):
    """``PATCH /connectors/{connector}/offsets`` body."""

    offsets: list[ConnectorOffset]


CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {"type": ["string", "null"]},
    "description": "Connector options (string values).",
}


def _error(status: int, message: str) -> JSONResponse:
    return ConnectJSONResponse({"error_code": status, "message": message}, status_code=status)


def _location(name: str) -> dict[str, str]:
    """The ``Location`` header of a created connector, its name percent-encoded as in Connect."""
    return {"Location": "/connectors/" + quote(name, safe="")}


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its ``$defs`` references replaced by the definitions (for openapi_extra)."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(defs[ref.rsplit("/", 1)[1]])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return dict(resolve(schema))


def _json_request(schema: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` describing a required JSON request body of `schema`."""
    content = {"application/json": {"schema": _inline(schema)}}
    return {"requestBody": {"required": True, "content": content}}


async def _body_bytes(request: Request) -> bytes:
    """The raw body (already bounded by the body limit); 415 unless it is JSON."""
    require_json(request.headers.get("content-type"))
    return await request.body()


def _json_body(raw: bytes = Depends(_body_bytes)) -> Any:
    """The parsed body; a sync dependency, so FastAPI runs it in a worker thread."""
    return parse_json(raw)


def _json_object(body: Any = Depends(_json_body)) -> dict[str, Any]:  # noqa: B008
    """A body that must be a JSON object (a connector config)."""
    if not isinstance(body, dict):
        raise BadRequestError(
            f"Invalid request: body: the body must be a JSON object, got {_json.type_name(body)}"
        )
    return body


def _create_request(body: Any = Depends(_json_body)) -> CreateConnectorRequest:  # noqa: B008
    """The ``POST /connectors`` body, validated (in a worker thread)."""
    try:
        return CreateConnectorRequest.model_validate(body)
    except ValidationError as error:
        raise RequestValidationError(
            [{**problem, "loc": ("body", *problem["loc"])} for problem in error.errors()]
        ) from None


def _validation_message(exc: RequestValidationError) -> str:
    problems = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        location = ".".join(str(part) for part in loc[1:]) if loc[:1] == ("body",) else ""
        location = location or ".".join(str(part) for part in loc)
        detail = error.get("msg", "invalid")
        if error.get("type") == "json_invalid":
            reason = error.get("ctx", {}).get("error", "cannot be parsed")
            location, detail = "body", f"malformed JSON ({reason} at position {loc[-1]})"
        elif loc == ("body",):
            detail = f"the body must be a JSON object ({detail})"
        problems.append(f"{location}: {detail}")
    return "Invalid request: " + "; ".join(problems)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HerderError)
    async def herder_error(request: Request, exc: HerderError) -> JSONResponse:
        if exc.status >= 500:
            log.warning("%s %s failed: %s", request.method, request.url.path, exc)
        return _error(exc.status, str(exc))

    @app.exception_handler(ConfigError)
    async def config_error(request: Request, exc: ConfigError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(EosConnectError)
    async def internal_error(request: Request, exc: EosConnectError) -> JSONResponse:
        log.warning("%s %s failed: %s", request.method, request.url.path, exc)
        return _error(500, str(exc))

    @app.exception_handler(Exception)
    async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(500, f"{type(exc).__name__}: {exc}")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = f"Unknown path {request.method} {request.url.path}"
        return _error(exc.status_code, message)


def _add_cluster_routes(app: FastAPI, herder: Herder) -> None:
    @app.get("/", summary="Version and Kafka cluster id")
    def root() -> dict[str, Any]:
        return herder.server_info()

    @app.get("/connector-plugins", summary="The connector classes that can be configured")
    def plugins(connectorsOnly: bool = True) -> list[dict[str, str]]:
        return herder.connector_plugins()

    @app.put(
        "/connector-plugins/{plugin}/config/validate",
        summary="Validate a config against a connector class",
        openapi_extra=_json_request(CONFIG_SCHEMA),
    )
    def validate(
        plugin: str,
        config: dict[str, Any] = Depends(_json_object),  # noqa: B008
    ) -> dict[str, Any]:
        return herder.validate(plugin, config)


def _add_connector_routes(app: FastAPI, herder: Herder) -> None:
    @app.get("/connectors", summary="Connector names, or per connector its status/info")
    def list_connectors(
        expand: list[str] | None = Query(None),  # noqa: B008
    ) -> Any:
        if expand:
            return herder.connectors_expanded(expand)
        return herder.connectors()

    @app.post(
        "/connectors",
        status_code=201,
        summary="Create a connector",
        openapi_extra=_json_request(CreateConnectorRequest.model_json_schema()),
    )
    def create(
        request: CreateConnectorRequest = Depends(_create_request),  # noqa: B008
    ) -> JSONResponse:
        info = herder.create(request.name, request.config, request.initial_state)
        return ConnectJSONResponse(info, status_code=201, headers=_location(info["name"]))

    @app.get("/connectors/{connector}", summary="Config, task ids and type")
    def info(connector: str) -> dict[str, Any]:
        return herder.info(connector)

    @app.delete("/connectors/{connector}", status_code=204, summary="Delete a connector")
    def delete(connector: str) -> Response:
        herder.delete(connector)
        return Response(status_code=204)

    @app.get("/connectors/{connector}/config", summary="The connector's config as stored")
    def get_config(connector: str) -> dict[str, Any]:
        return herder.config(connector)

    @app.put(
        "/connectors/{connector}/config",
        summary="Create or update a connector (409 while a running query owns it)",
        openapi_extra=_json_request(CONFIG_SCHEMA),
    )
    def put_config(
        connector: str,
        config: dict[str, Any] = Depends(_json_object),  # noqa: B008
    ) -> JSONResponse:
        created, info = herder.put_config(connector, config)
        if created:
            return ConnectJSONResponse(info, status_code=201, headers=_location(info["name"]))
        return ConnectJSONResponse(info)

    @app.get("/connectors/{connector}/status", summary="Connector and task states")
    def status(connector: str) -> dict[str, Any]:
        return herder.status(connector)

    @app.get("/connectors/{connector}/tasks", summary="Task configs (none when stopped)")
    def tasks(connector: str) -> list[dict[str, Any]]:
        return herder.task_configs(connector)

    @app.get("/connectors/{connector}/tasks/{task}/status", summary="One task's state")
    def task_status(connector: str, task: int) -> dict[str, Any]:
        return herder.task_status(connector, task)


def _add_state_routes(app: FastAPI, herder: Herder) -> None:
    @app.put("/connectors/{connector}/pause", status_code=202, summary="Pause")
    def pause(connector: str) -> Response:
        herder.pause(connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/resume", status_code=202, summary="Resume")
    def resume(connector: str) -> Response:
        herder.resume(connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/stop", status_code=204, summary="Stop (no tasks)")
    def stop(connector: str) -> Response:
        herder.stop(connector)
        return Response(status_code=204)

    @app.post(
        "/connectors/{connector}/restart",
        summary="Restart: 204 for the connector alone, 202 with what will restart",
    )
    def restart(
        connector: str,
        includeTasks: bool = False,
        onlyFailed: bool = False,
    ) -> Response:
        plan = herder.restart(connector, includeTasks, onlyFailed)
        if plan is None:
            return Response(status_code=204)
        return ConnectJSONResponse(plan, status_code=202)

    @app.post(
        "/connectors/{connector}/tasks/{task}/restart",
        status_code=204,
        summary="Restart a task (its connector's query restarts all of them)",
    )
    def restart_task(connector: str, task: int) -> Response:
        herder.restart_task(connector, task)
        return Response(status_code=204)


def _add_offsets_routes(app: FastAPI, herder: Herder) -> None:
    @app.get("/connectors/{connector}/offsets", summary="Committed offsets")
    def offsets(connector: str) -> dict[str, Any]:
        return herder.offsets(connector)

    @app.patch(
        "/connectors/{connector}/offsets",
        summary="Alter offsets (STOPPED only)",
        openapi_extra=_json_request(ConnectorOffsets.model_json_schema()),
    )
    def alter(
        connector: str,
        body: dict[str, Any] = Depends(_json_object),  # noqa: B008
    ) -> dict[str, str]:
        return herder.alter_offsets(connector, body)

    @app.delete("/connectors/{connector}/offsets", summary="Reset offsets (STOPPED only)")
    def reset(connector: str) -> dict[str, str]:
        return herder.reset_offsets(connector)


def create_app(
    herder: Herder,
    auth: BasicAuth | None = None,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> FastAPI:
    """The REST API over `herder`; OpenAPI at ``/openapi.json``. With `auth`, every path
    (``/``, ``/openapi.json`` and ``/docs`` included) needs basic credentials, else 401 (and no
    body is read). A body larger than `max_request_bytes` is answered 413 unparsed."""
    app = FastAPI(
        title="spark_eos_connect",
        version=__version__,
        description="Kafka Connect's REST API, backed by the Kafka internal topics.",
        default_response_class=ConnectJSONResponse,
        redirect_slashes=False,
    )
    _install_error_handlers(app)
    _add_cluster_routes(app, herder)
    _add_connector_routes(app, herder)
    _add_state_routes(app, herder)
    _add_offsets_routes(app, herder)
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_request_bytes)
    if auth is not None:  # outside the body limit: nothing is read before authentication
        app.add_middleware(BasicAuthMiddleware, auth=auth)
    app.add_middleware(HeadAndSlashMiddleware)
    return app
