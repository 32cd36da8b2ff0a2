"""Input limits every door applies before anything is stored: request body size, free-form JSON size
and depth, valid Unicode text, and datetimes that exist in UTC.

Each limit answers a clear 413/422 instead of failing later in the database or the serializer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator
from starlette.exceptions import HTTPException

MAX_JSON_FIELD_BYTES = 64 * 1024
"""Most bytes one free-form JSON field (`props`, KB `data`, ...) may take, serialized."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of a free-form JSON field."""
MAX_INT = 2**31 - 1
"""Largest offset or sequence number a query accepts (fits every integer column)."""


def _valid_unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (it contains a lone surrogate)") from None
    return value


Text = Annotated[str, AfterValidator(_valid_unicode)]
"""A string that can be stored: no lone surrogates."""


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value, computed without recursion (scalars are 0)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_json(value: Any, what: str = "value") -> Any:
    """Refuse JSON deeper than MAX_JSON_DEPTH, bigger than MAX_JSON_FIELD_BYTES or with invalid text."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{what} must be valid Unicode (it contains a lone surrogate)") from None
    if size > MAX_JSON_FIELD_BYTES:
        raise ValueError(f"{what} is {size} bytes as JSON; the limit is {MAX_JSON_FIELD_BYTES}")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]
"""A free-form JSON object with bounded size and depth."""


def _exists_in_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    try:
        value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    except OverflowError:
        raise ValueError("date is out of range once converted to UTC") from None
    if not 1 <= value.year <= 9998:
        raise ValueError("date must be between years 1 and 9998")
    return value


BoundedDatetime = Annotated[datetime, AfterValidator(_exists_in_utc)]
"""A datetime that can be converted to UTC (no year-0 or year-10000 overflow)."""


def _number_not_flag_or_text(value: Any) -> Any:
    if isinstance(value, bool | str):
        raise ValueError("Input should be a valid integer")
    return value


JsonInt = Annotated[int, BeforeValidator(_number_not_flag_or_text)]
"""JSON Schema's integer: `35` and `35.0` (an integral number) pass; `true`, `0.5` and `"35"` do not."""

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


MAX_HEADER_BYTES = 32 * 1024
"""Request headers (names and values) a request may carry; nginx's default allows 32 KB too."""


class BodySizeLimit:
    """ASGI middleware: a request body over `max_bytes` answers 413 (by header, or while streaming);
    headers over `MAX_HEADER_BYTES` answer 431 (`orrery serve` also caps them in the HTTP parser)."""

    def __init__(self, app: App, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if sum(len(k) + len(v) for k, v in scope.get("headers") or []) > MAX_HEADER_BYTES:
            message = f"the request headers are larger than {MAX_HEADER_BYTES} bytes"
            await self._refuse(send, 431, "headers_too_large", message)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send, 413, "too_large", self._message())
            return
        seen = 0

        async def limited() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:  # no Content-Length: counted while it streams in
                    raise HTTPException(413, self._message())
            return message

        await self.app(scope, limited, send)

    def _message(self) -> str:
        return f"the request body is larger than {self.max_bytes} bytes"

    async def _refuse(self, send: Send, status: int, code: str, message: str) -> None:
        # before routing, so one body fits both shapes: Orrery's and OpenAI's (`type`, `param`)
        error = {"code": code, "message": message, "details": None}
        error |= {"type": "invalid_request_error", "param": None}
        body = json.dumps({"error": error})
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})
