"""What sits in front of the MCP streamable-HTTP app: CORS for browser clients (the MCP Inspector),
and a wrong API key answered as a clear refusal rather than an invitation to OAuth.

A CORS preflight (`OPTIONS /mcp` from an origin in `ORRERY_CORS_ORIGINS`) is answered 204 before
authentication, as browsers send it without credentials. A request with **no** key gets the SDK's
401 Bearer challenge (authorization is required). A request whose key is **wrong** gets 403
`invalid_key` with a JSON-RPC error body naming the problem (an MCP client shows its message): on a
401, OAuth-capable clients such as the Inspector start the MCP authorization flow
(protected-resource discovery, client registration) against a server that has no authorization
server, and the user sees that flow fail instead of "invalid key". The MCP specification's
401-for-an-invalid-token rule belongs to its OAuth profile, which is optional and which an API-key
server does not implement.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orrery.config import Settings

INVALID_KEY = (
    "invalid Orrery API key: it is unknown, revoked or malformed; send 'Authorization: Bearer orr_...' "
    "with a key from `orrery keys create` (or `orrery demo load`)"
)
REFUSAL = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32001, "message": INVALID_KEY, "data": {"error": "invalid_key"}},
}
"""The 403's body: a JSON-RPC error, so an MCP client (the Python SDK's) shows its message."""
_MCP_HEADERS = ["Mcp-Session-Id", "Mcp-Protocol-Version", "WWW-Authenticate"]


class _Preflight204(CORSMiddleware):
    """Starlette's CORS, with an accepted preflight answered 204 (no body) rather than 200 `OK`."""

    def preflight_response(self, request_headers: Headers) -> Response:
        answer = super().preflight_response(request_headers)
        if answer.status_code != 200:
            return answer
        keep = {k: v for k, v in answer.headers.items() if k not in ("content-length", "content-type")}
        return Response(status_code=204, headers=keep)


class InvalidKeyRefusal:
    """A 401 for a request that did carry a key becomes 403 `invalid_key` with a readable body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "authorization" not in Headers(scope=scope):
            await self.app(scope, receive, send)
            return
        refused = False

        async def rewrite(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
                body = json.dumps(REFUSAL).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 403, "headers": headers})
                await send({"type": "http.response.body", "body": body})
            elif not refused:
                await send(message)

        await self.app(scope, receive, rewrite)


def fronted(app: Any, settings: Settings) -> Any:
    """The MCP app behind the key refusal and, when origins are configured, CORS (outermost)."""
    app = InvalidKeyRefusal(app)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if not origins:
        return app
    return _Preflight204(
        app,
        allow_origins=origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=["*"],
        expose_headers=_MCP_HEADERS,
        max_age=600,
    )
