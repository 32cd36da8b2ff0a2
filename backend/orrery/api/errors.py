"""One error shape for every 4xx/5xx: `{"error": {"code", "message", "details"}}` — no stack traces."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException
from starlette.routing import compile_path

from orrery.api.openai_errors import invalid_body, is_openai_path, openai_shaped
from orrery.db.failures import as_unavailable, outage_line
from orrery.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    OrreryError,
    RateLimitedError,
    ServiceUnavailableError,
    UserError,
)
from orrery.errors import error_body as error_body  # the shape, shared with the services layer
from orrery.validation import error_details, excerpt_message, readable

log = logging.getLogger("orrery.api")
STATUS_BY_ERROR: list[tuple[type[OrreryError], int, str]] = [
    (NotFoundError, 404, "not_found"),
    (AuthenticationError, 401, "unauthorized"),
    (ConflictError, 409, "conflict"),
    (RateLimitedError, 429, "rate_limited"),
    (UserError, 422, "invalid"),
    (ServiceUnavailableError, 503, "unavailable"),
    (OrreryError, 500, "internal"),
]


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str
    message: str
    details: Any = None


class ErrorOut(BaseModel):
    """Every 4xx/5xx response."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "The body is not parseable JSON"},
    401: {"model": ErrorOut, "description": "Missing, malformed or revoked API key"},
    404: {"model": ErrorOut, "description": "Not found, or not yours"},
    409: {"model": ErrorOut, "description": "Conflicts with existing data"},
    413: {"model": ErrorOut, "description": "The request body is larger than ORRERY_MAX_BODY_BYTES"},
    422: {"model": ErrorOut, "description": "Invalid input"},
    431: {"model": ErrorOut, "description": "The request headers are larger than 32 KB"},
    503: {"model": ErrorOut, "description": "Busy or unreachable database; retry after `Retry-After` s"},
}
"""Declared on every router so the OpenAPI document lists the error shape."""

RATE_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {"model": ErrorOut, "description": "A per-user limit is reached; retry after `Retry-After` seconds"}
}
"""Declared on the routes that run a turn (the only ones per-user limits refuse)."""

SSE_CONTENT: dict[str, Any] = {
    "schema": {
        "type": "object",
        "description": "One Server-Sent Event of the stream",
        "properties": {"event": {"type": "string"}, "data": {"type": "string"}, "id": {"type": "string"}},
    }
}
"""The OpenAPI content of a streamed success response."""


def _answer(
    request: Request,
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> JSONResponse:
    """Orrery's error shape, or OpenAI's on the OpenAI-compatible paths (naming `param`)."""
    if is_openai_path(request.url.path):
        return openai_shaped(request.url.path, status, code, message, headers, param)
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


async def _orrery(request: Request, exc: Exception) -> JSONResponse:
    status, code = next((s, c) for cls, s, c in STATUS_BY_ERROR if isinstance(exc, cls))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(exc, ServiceUnavailableError):
        return _unavailable(request, exc)
    if isinstance(exc, RateLimitedError):
        headers = {"Retry-After": str(exc.retry_after)}
    return _answer(request, status, code, str(exc), headers=headers, param=getattr(exc, "param", None))


def _unavailable(request: Request, exc: ServiceUnavailableError) -> JSONResponse:
    details, headers = {"retry_after": exc.retry_after}, {"Retry-After": str(exc.retry_after)}
    return _answer(request, 503, "unavailable", str(exc), details, headers)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    if is_openai_path(request.url.path):
        return invalid_body(list(exc.errors()))
    errors = exc.errors()
    message = f"the request is not valid: {readable(errors, skip=1)}"
    return JSONResponse(
        error_body("invalid", excerpt_message(message), error_details(errors)), status_code=422
    )


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = "too_large" if exc.status_code == 413 else "http_error"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request) or headers.get("Allow", "")
    return _answer(request, exc.status_code, code, str(exc.detail), headers=headers or None)


def _allowed_methods(request: Request) -> str:
    """Every method the API serves at this path: Starlette's 405 names only the first matching
    route's, and `/v1/sessions/{id}` is served by several routes (GET, PATCH, DELETE). The table is
    built once per app from its OpenAPI paths."""
    table: list[tuple[re.Pattern[str], set[str]]] | None = getattr(request.app.state, "allow_table", None)
    if table is None:
        paths = request.app.openapi().get("paths", {})
        table = [(compile_path(path)[0], {m.upper() for m in ops}) for path, ops in paths.items()]
        request.app.state.allow_table = table
    methods = {m for regex, ops in table if regex.match(request.url.path) for m in ops}
    return ", ".join(sorted(methods))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    settings = getattr(request.app.state, "settings", None)
    outage = as_unavailable(exc, settings.retry_after_seconds if settings else 2)
    if outage is not None:
        log.warning("answered 503: %s (%s)", outage, outage_line(exc))
        return _unavailable(request, outage)
    log.exception("unhandled error", exc_info=exc)
    return _answer(request, 500, "internal", "internal error")


def install(app: FastAPI) -> None:
    """Register the handlers."""
    app.add_exception_handler(OrreryError, _orrery)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(SQLAlchemyError, _unexpected)  # outages answer 503, not through the
    app.add_exception_handler(ConnectionError, _unexpected)  # server-error middleware (no re-raise)
    app.add_exception_handler(Exception, _unexpected)
