"""Input limits every door applies before anything is stored: request body size, a URL with a NUL,
free-form JSON size and depth, and datetimes that exist in UTC (the text rules themselves live in
`orrery.validation`, shared with the tools and the CLI).

Each limit answers a clear 413/422 instead of failing later in the database or the serializer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import unquote

from pydantic import AfterValidator, BeforeValidator
from starlette.exceptions import HTTPException

from orrery.validation import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from orrery.validation import MAX_JSON_FIELD_BYTES as MAX_JSON_FIELD_BYTES
from orrery.validation import Text as Text
from orrery.validation import check_json, unstorable

MAX_INT = 2**31 - 1
"""Largest offset or sequence number a query accepts (fits every integer column)."""

JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]
"""A free-form JSON object with bounded size and depth, and only storable text."""


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _iso_8601_only(value: Any) -> Any:
    """pydantic would read `0`, `1e11` or `"0"` as seconds since 1970: a date is written out."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError("a date must be an ISO-8601 string, such as 2026-05-01T09:00:00Z")
    return value


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


BoundedDatetime = Annotated[datetime, BeforeValidator(_iso_8601_only), AfterValidator(_exists_in_utc)]
"""An ISO-8601 datetime that can be converted to UTC (no year-0 or year-10000 overflow, no number
read as a Unix time)."""


def _number_not_flag_or_text(value: Any) -> Any:
    if isinstance(value, bool | str):
        raise ValueError("Input should be a valid integer")
    return value


JsonInt = Annotated[int, BeforeValidator(_number_not_flag_or_text)]
"""JSON Schema's integer: `35` and `35.0` (an integral number) pass; `true`, `0.5` and `"35"` do not."""


INTEGER_ONLY = BeforeValidator(_number_not_flag_or_text)
"""`JsonInt`'s check, to follow bounds: `Annotated[int, Field(ge=1, le=5), INTEGER_ONLY]` is declared
as `minimum`/`maximum` in the OpenAPI document (bounds on `JsonInt` itself show as `ge`/`le`)."""


Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


MAX_HEADER_BYTES = 32 * 1024
"""Request headers (names and values) a request may carry; nginx's default allows 32 KB too."""


def _url_problem(scope: MutableMapping[str, Any]) -> str | None:
    """A path or query with unstorable text (`%00`) can never match or be stored: refused here, for
    every route alike, instead of reaching the database (which PostgreSQL answers with an error)."""
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    for where, text in (("path", scope.get("path") or ""), ("query", unquote(query))):
        problem = unstorable(text)
        if problem is not None:
            return f"the URL's {where} contains {problem}, which cannot be stored or searched"
    return None


class BodySizeLimit:
    """ASGI middleware: a request body over `max_bytes` answers 413 (by header, or while streaming);
    headers over `MAX_HEADER_BYTES` answer 431 (`orrery serve` also caps them in the HTTP parser);
    a NUL in the URL answers 422."""

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
        problem = _url_problem(scope)
        if problem is not None:
            await self._refuse(send, 422, "invalid", problem)
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
