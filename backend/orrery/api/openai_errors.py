"""Errors on the OpenAI-compatible paths in OpenAI's own shape and status codes.

The `openai` SDK (and the frameworks built on it) read `error.type`, `error.param` and `error.code`
and pick the exception by status, so on `/v1/chat/completions`, `/v1/models` and `/v1/responses`
every error — a bad key, an invalid body, an unknown route — answers like OpenAI: invalid requests
are 400 `invalid_request_error` (not 422) naming the parameter, a bad key is 401 `invalid_api_key`.
OpenAI paths Orrery does not serve (`/v1/completions`, `/v1/embeddings`, ...) are 404 naming what is.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi.responses import JSONResponse

from orrery.validation import UnstorableValue

SERVED = "POST /v1/chat/completions, POST /v1/responses, GET /v1/models"
_SERVED_PATHS = re.compile(r"^/v1/(chat/completions|models(/.*)?|responses(/.*)?)/?$")
_OTHER_OPENAI = re.compile(
    r"^/v1/(completions|embeddings|images|audio|moderations|files|uploads|batches|fine_tuning|fine-tunes"
    r"|assistants|threads|vector_stores|realtime|conversations|containers|evals|chat(?!/completions/?$))"
    r"(/.*)?$"
)
# Orrery's error code -> OpenAI's (type, code) for each status the app answers
_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", "invalid_value"),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", None),
    405: ("invalid_request_error", "method_not_allowed"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", None),  # Orrery's `too_large`, as the size middleware says too
    429: ("requests", "rate_limit_exceeded"),
    503: ("server_error", "unavailable"),
}


def is_openai_path(path: str) -> bool:
    """Whether errors on this path answer in OpenAI's shape (served, or an OpenAI path not served)."""
    return bool(_SERVED_PATHS.match(path) or _OTHER_OPENAI.match(path))


def openai_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error object."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def openai_shaped(
    path: str,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> JSONResponse:
    """An error Orrery answers anywhere, as OpenAI answers it: 422 becomes 400, an unknown OpenAI
    route names what is served."""
    if status == 404 and code == "http_error":  # no route: OpenAI's own "Invalid URL"
        message, code = f"Invalid URL ({path}): not served; this server serves {SERVED}", "unknown_url"
    status = 400 if status == 422 else status
    fallback = ("server_error" if status >= 500 else "invalid_request_error", None)
    type_, openai_code = _TYPES.get(status, fallback)
    body = openai_body(message, type_, openai_code or code, param)
    return JSONResponse(body, status_code=status, headers=headers)


def invalid_body(errors: list[dict[str, Any]]) -> JSONResponse:
    """A request body that fails validation: 400 naming the first offending parameter (a body
    that is not JSON at all names `body` and where the JSON broke, not a bare position)."""
    if errors and errors[0].get("type") == "json_invalid":
        at = [p for p in errors[0].get("loc", ()) if isinstance(p, int)]
        where = f" (at character {at[0]})" if at else ""
        message = f"Invalid request: the body is not valid JSON{where}: {errors[0].get('msg')}"
        return JSONResponse(openai_body(message, "invalid_request_error", "invalid_json", "body"), 400)
    described = [f"{_param(e.get('loc', ())) or 'body'}: {e.get('msg')}" for e in errors]
    param = (_param(errors[0].get("loc", ())) or _scanned_path(errors[0])) if errors else None
    message = "Invalid request: " + "; ".join(described)
    body = openai_body(message, "invalid_request_error", "invalid_value", param)
    return JSONResponse(body, status_code=400)


def _param(loc: Any) -> str | None:
    """`("body", "messages", 0, "content")` as OpenAI names it: `messages[0].content`."""
    name = ""
    for part in list(loc)[1:] if list(loc)[:1] in (["body"], ["header"], ["query"]) else list(loc):
        if isinstance(part, int):
            name += f"[{part}]"
        elif str(part).isidentifier() and part not in _TYPE_NAMES:  # not a union member's tag
            name += f".{part}" if name else str(part)
    return name or None


def _scanned_path(error: dict[str, Any]) -> str | None:
    """The path a whole-body check named (`UnstorableValue`), when pydantic's location is the body."""
    cause = (error.get("ctx") or {}).get("error")
    return cause.path or None if isinstance(cause, UnstorableValue) else None


_TYPE_NAMES = {"str", "int", "float", "bool", "list", "dict", "none"}
