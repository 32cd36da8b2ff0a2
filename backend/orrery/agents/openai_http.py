"""A chat-completions request over aiohttp, failing as the `openai` SDK fails.

The direct client (`agents.openai_model`) sends a body it built as plain JSON and reads the stream
as lines (`openai_sse`), so the SDK's request layers (options models copied per call, the body
encoded by its pure-Python encoder, httpx's URL, cookie and header objects, then aiohttp under
them) cost CPU and ~40 MB of imports a turn never uses: ~10% of a provider turn at
`bench.door --provider`. This module posts with aiohttp alone and keeps what callers rely on, the
SDK's exceptions: an HTTP error is the SDK's `APIStatusError` subclass for its status (built as the
SDK builds it), no answer in time `APITimeoutError`, no connection `APIConnectionError`; a body cut
off mid-stream raises httpx's `ReadError` (`ReadTimeout` when it stalls), as the SDK's stream
does (`attempts` reads a lost connection from it). The SDK is imported only to raise those.

Inside a server (`pooled`, the app's lifespan) one `ClientSession` per event loop keeps its
connections alive between turns and is closed when the server stops; elsewhere (a CLI turn, a
test) each request has its own session, closed with it.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import aiohttp

from orrery import __version__

if TYPE_CHECKING:
    import httpx

_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession]
_sessions = weakref.WeakKeyDictionary()
_served: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
USER_AGENT = f"orrery/{__version__}"
CONNECTIONS = 1000
"""Connections a server's session may hold at once (the SDK's own limit)."""


@asynccontextmanager
async def pooled() -> AsyncIterator[None]:
    """While a server's loop runs: its requests share one session (made on first use), closed when
    it stops."""
    loop = asyncio.get_running_loop()
    _served.add(loop)
    try:
        yield
    finally:
        _served.discard(loop)
        found = _sessions.pop(loop, None)
        if found is not None:
            await found.close()


def served_session() -> aiohttp.ClientSession | None:
    """The running server loop's session (None outside a server, or before its first request)."""
    return _sessions.get(asyncio.get_running_loop())


def _new_session() -> aiohttp.ClientSession:
    """A session that reads proxies from the environment, as the SDK's httpx client does."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONNECTIONS), trust_env=True)


async def _session(stack: AsyncExitStack) -> aiohttp.ClientSession:
    loop = asyncio.get_running_loop()
    if loop not in _served:
        return await stack.enter_async_context(_new_session())
    found = _sessions.get(loop)
    if found is None or found.closed:
        found = _sessions[loop] = _new_session()
    return found


def headers(api_key: str, organization: str | None) -> dict[str, str]:
    """What the provider needs to accept the request (the SDK's telemetry headers left out)."""
    sent = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
    }
    if organization:
        sent["OpenAI-Organization"] = organization
    return sent


@asynccontextmanager
async def post(
    url: str, body: dict[str, Any], sent: dict[str, str], seconds: float
) -> AsyncIterator[aiohttp.ClientResponse]:
    """The provider's successful response to `body` (JSON), open until the block ends (`seconds`:
    to connect, and between reads); an HTTP error, a timeout or no connection raised as the SDK's
    exception."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    limits = aiohttp.ClientTimeout(total=None, connect=seconds, sock_read=seconds)
    async with AsyncExitStack() as stack:
        session = await _session(stack)
        try:
            response = await stack.enter_async_context(
                session.post(url, data=data, headers=sent, timeout=limits, allow_redirects=False)
            )
        except TimeoutError as exc:  # aiohttp's ServerTimeoutError is one
            raise _timeout(url) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise _unreachable(url, exc) from exc
        if response.status >= 400:
            raise status_error(url, response.status, response.headers, await _read(response))
        yield response


async def _read(response: aiohttp.ClientResponse) -> bytes:
    """The whole body; a connection lost or stalled while it is read fails as httpx's stream does."""
    try:
        return await response.read()
    except MID_BODY as exc:
        raise _mid_body(exc) from exc


async def read_json(response: aiohttp.ClientResponse) -> Any:
    """A non-streamed answer's JSON."""
    return json.loads(await _read(response))


async def lines(response: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """The body's lines as they arrive (no line-length limit: a provider may send a whole tool
    call's arguments in one event), without their line breaks."""
    pending = b""
    chunks = response.content.iter_any()
    while True:
        try:
            chunk = await anext(chunks, b"")
        except MID_BODY as exc:
            raise _mid_body(exc) from exc
        if not chunk:
            break
        *whole, pending = (pending + chunk).split(b"\n")
        for line in whole:
            yield line.rstrip(b"\r").decode("utf-8", "replace")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", "replace")


def request_of(url: str) -> httpx.Request:
    """The request the SDK's exceptions name (for their `request` attribute)."""
    import httpx

    return httpx.Request("POST", url)


MID_BODY = (TimeoutError, aiohttp.ClientError, OSError)
"""What reading a body raises when it stalls or is cut off (aiohttp's `ServerTimeoutError` is a
`TimeoutError` too); anything else, a cancellation, passes as it is."""


def _mid_body(exc: Exception) -> Exception:
    """httpx's error for a body that stalled (`ReadTimeout`) or was cut off (`ReadError`)."""
    import httpx

    if isinstance(exc, TimeoutError):
        return httpx.ReadTimeout(str(exc) or "the provider's stream stalled")
    return httpx.ReadError(str(exc) or "the provider's stream was cut off")


def _timeout(url: str) -> Exception:
    import openai

    failure: Exception = openai.APITimeoutError(request=request_of(url))
    return failure


def _unreachable(url: str, exc: BaseException) -> Exception:
    import openai

    message = f"Connection error: {exc}"
    failure: Exception = openai.APIConnectionError(message=message, request=request_of(url))
    return failure


def status_error(url: str, status: int, sent_headers: Any, content: bytes) -> Exception:
    """The SDK's exception for an HTTP error answer (`AsyncOpenAI._make_status_error`'s mapping,
    its message and `body`)."""
    import httpx
    import openai

    text = content.decode("utf-8", "replace").strip()
    body: Any = text
    try:
        body = json.loads(text)
        message = f"Error code: {status} - {body}"
    except ValueError:
        message = text or f"Error code: {status}"
    response = httpx.Response(status, headers=dict(sent_headers), content=content, request=request_of(url))
    data = body.get("error", body) if isinstance(body, dict) else body
    kinds: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        409: openai.ConflictError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }
    kind = kinds.get(status) or (openai.InternalServerError if status >= 500 else openai.APIStatusError)
    failure: Exception = kind(message, response=response, body=data)
    return failure
