"""One error shape for every 4xx/5xx: `{"error": {"code", "message", "details"}}` — no stack traces."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from backend.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    OrreryError,
    RateLimitedError,
    UserError,
)

log = logging.getLogger("orrery.api")
STATUS_BY_ERROR: list[tuple[type[OrreryError], int, str]] = [
    (NotFoundError, 404, "not_found"),
    (AuthenticationError, 401, "unauthorized"),
    (ConflictError, 409, "conflict"),
    (RateLimitedError, 429, "rate_limited"),
    (UserError, 422, "invalid"),
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


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The JSON every error response carries."""
    return {"error": {"code": code, "message": message, "details": details}}


async def _orrery(_request: Request, exc: Exception) -> JSONResponse:
    status, code = next((s, c) for cls, s, c in STATUS_BY_ERROR if isinstance(exc, cls))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(exc, RateLimitedError):
        headers = {"Retry-After": str(exc.retry_after)}
    return JSONResponse(error_body(code, str(exc)), status_code=status, headers=headers)


async def _validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in exc.errors()]
    return JSONResponse(error_body("invalid", "the request is not valid", details), status_code=422)


async def _http(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = "too_large" if exc.status_code == 413 else "http_error"
    # keep the exception's headers: a 405 carries `Allow`
    return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code, headers=exc.headers)


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return JSONResponse(error_body("internal", "internal error"), status_code=500)


def install(app: FastAPI) -> None:
    """Register the handlers."""
    app.add_exception_handler(OrreryError, _orrery)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
