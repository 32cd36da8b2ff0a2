"""The API's documentation pages (`/docs`, `/redoc`, served by fastapi-offline from local assets)
carry the web app's security headers. Their CSP differs only where the pages need it to render: each
inline script is allowed by its hash, computed from the page as served (a FastAPI upgrade that
changes the page keeps working), and inline styles and blob workers are allowed (ReDoc injects its
styles and runs its search in a worker). Nothing else may load, and no other site may frame them."""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orrery.web.deps import SECURITY_HEADERS

DOCS_PAGES = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})
"""fastapi-offline's page paths (its defaults, which `create_app` keeps)."""
DOCS_CSP = (
    "default-src 'none'; script-src 'self'{hashes}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_headers(page: bytes) -> dict[str, str]:
    """The security headers of one documentation page, its inline scripts allowed by hash."""
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in INLINE_SCRIPT.findall(page)
    )
    return {**SECURITY_HEADERS, "Content-Security-Policy": DOCS_CSP.format(hashes=hashes)}


class DocsPageHeaders:
    """Adds `docs_headers` to the documentation pages' responses (small HTML, buffered whole);
    every other request passes straight through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in DOCS_PAGES:
            await self.app(scope, receive, send)
            return
        start: Message = {}
        body = bytearray()

        async def buffered(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            added = docs_headers(bytes(body))
            names = {name.lower().encode() for name in added}
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() not in names]
            headers += [(k.lower().encode(), v.encode()) for k, v in added.items()]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, buffered)
