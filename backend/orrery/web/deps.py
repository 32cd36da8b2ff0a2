"""Browser authentication (an HttpOnly session cookie), CSRF checks for cookie-authenticated writes,
HTML rendering with strict security headers, and the error pages every web route answers with."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.offline import NOTICE as OFFLINE_NOTICE
from orrery.db.engine import Database
from orrery.errors import AuthenticationError, NotFoundError, RateLimitedError, UserError
from orrery.repo.web_tokens import WebSession, resolve_web_session
from orrery.services.deps import SettingsDep, get_read_session, get_session
from orrery.validation import UnstorableValue, readable, scan

COOKIE = "orrery_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")
TEMPLATES.env.globals["offline_notice"] = OFFLINE_NOTICE
"""Shown once at the top of a chat when the configured model is the offline one (never in a reply)."""
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class CsrfError(UserError):
    """A cookie-authenticated write without the page's CSRF token (or from another origin)."""


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    """A template as HTML with the security headers every page carries."""
    response = TEMPLATES.TemplateResponse(request, template, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response


def csrf_token(web: WebSession, secret: str) -> str:
    """The CSRF token of a browser session: derived from it, so every worker agrees without storage."""
    return hmac.new(secret.encode(), f"csrf:{web.token_hash}".encode(), "sha256").hexdigest()


async def get_web_session(request: Request, settings: SettingsDep) -> WebSession:
    """The signed-in browser, from the session cookie (one query, in its own short transaction so
    a streamed turn holds no connection)."""
    token = request.cookies.get(COOKIE)
    if not token:
        raise AuthenticationError("not signed in")
    database: Database = request.app.state.db
    async with database.sessions() as session:
        web = await resolve_web_session(session, token, settings.secret_key)
    request.state.csrf = csrf_token(web, settings.secret_key)
    return web


WebUser = Annotated[WebSession, Depends(get_web_session)]
WebTx = Annotated[AsyncSession, Depends(get_session, scope="function")]
"""The request's transaction, committed BEFORE the response is sent, so the page a redirect leads
to already sees the write."""
WebRead = Annotated[AsyncSession, Depends(get_read_session, scope="function")]
"""A page that only reads: never takes SQLite's write lock, so pages load while a turn is written."""


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path on this site only (never `//host` or a full URL)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value if all(c.isprintable() and not c.isspace() for c in value) else "/"


def refuse_cross_origin(request: Request) -> None:
    """A browser names the page a write comes from; another site's page is refused."""
    origin = request.headers.get("origin")
    if origin and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise CsrfError("cross-origin write refused")


async def require_csrf(request: Request, web: WebUser, settings: SettingsDep) -> WebSession:
    """A write from our own page: same origin, and the CSRF token as header or form field."""
    refuse_cross_origin(request)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(FORM_TYPES):
        value = (await request.form()).get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    if not sent or not hmac.compare_digest(sent, csrf_token(web, settings.secret_key)):
        raise CsrfError("missing or wrong CSRF token: reload the page and try again")
    return web


CsrfUser = Annotated[WebSession, Depends(require_csrf)]


async def check_form(request: Request) -> None:
    """Every field of a posted form (names too) under the rule every door applies: text that cannot
    be stored (NUL, a lone surrogate) is refused, worded as the API words it, before any handler
    runs (PostgreSQL would otherwise refuse it mid-write, SQLite would store it)."""
    if not request.headers.get("content-type", "").startswith(FORM_TYPES):
        return
    for key, value in (await request.form()).multi_items():
        scan({key: value} if isinstance(value, str) else [key])


class WebRoute(APIRoute):
    """Routes answering HTML: not signed in -> the login page; not found -> a 404 page; bad input
    -> a 400 page (unstorable text) or a 422 page (a field too long, a malformed parameter); a
    refused write -> 403; a per-user limit -> 429. The JSON API keeps its own error mapping."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                await check_form(request)
                return await handler(request)
            except UnstorableValue as exc:
                return _error(request, 400, "That did not work.", str(exc))
            except RequestValidationError as exc:
                return _error(request, 422, "That did not work.", readable(exc.errors(), skip=1))
            except AuthenticationError as exc:
                if request.method == "GET" and not request.headers.get("hx-request"):
                    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                    target = "/login" if back == "/" else f"/login?{urlencode({'next': back})}"
                    return RedirectResponse(target, status_code=303)
                return _error(request, 401, "Please sign in again.", str(exc))
            except CsrfError as exc:
                return _error(request, 403, "That request was refused.", str(exc))
            except NotFoundError:
                return _error(request, 404, "Not found.", "There is nothing here, or it is not yours to see.")
            except RateLimitedError as exc:
                limited = _error(request, 429, "Slow down.", str(exc))
                limited.headers["Retry-After"] = str(exc.retry_after)
                return limited
            except UserError as exc:
                return _error(request, 400, "That did not work.", str(exc))

        return route


def _error(request: Request, status: int, title: str, detail: str) -> Response:
    """A full error page, or just the message when htmx asked for a fragment."""
    template = "_error.html" if request.headers.get("hx-request") else "error.html"
    return render(request, template, status_code=status, title=title, detail=detail)
