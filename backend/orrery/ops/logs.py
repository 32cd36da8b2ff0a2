"""Structured logs: one JSON object per line (or plain text) carrying the request id of the HTTP
request that logged it; the id is returned as `X-Request-ID` (a sane incoming one is kept)."""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace
from pythonjsonlogger.json import JsonFormatter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orrery.config import Settings
from orrery.db.failures import as_unavailable
from orrery.errors import ConfigurationError

request_id: ContextVar[str | None] = ContextVar("orrery_request_id", default=None)
conversation_id: ContextVar[str | None] = ContextVar("orrery_conversation_id", default=None)
"""The chat session a turn runs in (traces report it as `gen_ai.conversation.id`)."""
SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"
QUIET_PATHS = frozenset({"/health", "/metrics"})
"""Probed every few seconds by load balancers and Prometheus: logged at debug level only."""
access_log = logging.getLogger("orrery.http")
turn_log = logging.getLogger("orrery.turns")


class RequestIdFilter(logging.Filter):
    """Stamp every record with the current request id (`-` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        record.__dict__.pop("color_message", None)  # uvicorn's ANSI-coloured duplicate of `message`
        return True


class _OrreryHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is now (test runners swap it); marks the handler this module
    installed, so configuring twice does not log twice."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


LIBRARY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
"""Libraries that install their own console handlers: their records go through ours instead."""


def _is_console(handler: logging.Handler) -> bool:
    """A handler writing to the terminal (what `logging.basicConfig` or a library installs); test
    runners' capture handlers write elsewhere and are kept."""
    if isinstance(handler, _OrreryHandler):
        return True
    stream = getattr(handler, "stream", None)
    return isinstance(handler, logging.StreamHandler) and stream in (sys.stderr, sys.stdout)


def _is_stream(handler: logging.Handler) -> bool:
    """Any stream handler but a file's (litellm's routes each record to stdout or stderr itself)."""
    return isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)


def configure_logging(settings: Settings, *, shown: str | None = None, plain: bool = False) -> None:
    """One handler, on the root logger, writes every record once in the chosen format with its
    request id, always to stderr: Orrery's, uvicorn's and third parties' (litellm's warnings,
    tracebacks) alike. A console handler installed by a library or `basicConfig` is removed, so no
    line appears twice. `shown` raises the handler's own level (the CLI's default: warnings only);
    `plain`: text lines are the message alone (a terminal user reads a warning, not a log record)."""
    handler = _OrreryHandler()
    if shown is not None:
        handler.setLevel(shown.upper())
    handler.addFilter(RequestIdFilter())
    if settings.log_format == "json":
        handler.setFormatter(
            JsonFormatter(JSON_FIELDS, rename_fields={"levelname": "level", "name": "logger"})
        )
    else:
        handler.setFormatter(logging.Formatter("%(message)s" if plain else TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if not _is_console(h)] + [handler]
    level = settings.log_level.upper()
    for name in ("orrery", "uvicorn", "uvicorn.error", "uvicorn.access", *LIBRARY_LOGGERS):
        logger = logging.getLogger(name)
        logger.handlers = [h for h in logger.handlers if not _is_stream(h)]
        logger.propagate = True
        if not name.startswith("LiteLLM"):
            logger.setLevel(level)
    logging.getLogger("uvicorn.access").disabled = True  # replaced by orrery.http lines with the request id


class RequestIdMiddleware:
    """Give each HTTP request an id (the client's `X-Request-ID` if sane), expose it to logs and
    return it; log one line per request with status and duration."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        rid = incoming if SANE_REQUEST_ID.match(incoming) else uuid.uuid4().hex
        token = request_id.set(rid)
        server_span = trace.get_current_span()  # tracing's server span starts before this middleware
        if server_span.is_recording():
            server_span.set_attribute("orrery.request_id", rid)
        started = time.perf_counter()
        status = {"code": 500}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            access_log.log(
                logging.DEBUG if scope["path"] in QUIET_PATHS else logging.INFO,
                "%s %s %d %.1f ms",
                scope["method"],
                scope["path"],
                status["code"],
                (time.perf_counter() - started) * 1000,
                extra={"method": scope["method"], "path": scope["path"], "status": status["code"]},
            )
            request_id.reset(token)


def log_turn_failure(exc: BaseException, **context: Any) -> None:
    """A failed turn, in full (exception chain and traceback) for operators; clients get a short
    message from the API layer instead. A configuration error (a refused key) is one line: its
    message says what to fix, a traceback would only bury it; so is a database outage (one line a
    turn, where a traceback each wrote megabytes a minute)."""
    turn_log.error(
        "turn failed: %s: %s",
        type(exc).__name__,
        exc,
        exc_info=None if _is_configuration(exc) or as_unavailable(exc) is not None else exc,
        extra={key: str(value) for key, value in context.items()},
    )


def _is_configuration(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):  # fallback models: every attempt refused
        return all(_is_configuration(e) for e in exc.exceptions)
    return isinstance(exc, ConfigurationError)
