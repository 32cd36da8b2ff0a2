"""Signing in and out of the web app: an API key posted to `/login`, or a one-time link printed by
`orrery web link`; both set an HttpOnly, SameSite=Strict cookie (Secure over HTTPS).

The sign-in form carries a login token (a signed double submit): a random nonce in a short-lived
SameSite=Strict cookie, and its HMAC (keyed by the server secret, so every worker agrees) in the form.
Another site's form can send neither, so it cannot sign a browser in as someone else (login CSRF),
even from a client that sends no `Origin`."""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from orrery.errors import AuthenticationError
from orrery.repo import web_tokens
from orrery.services.deps import SettingsDep
from orrery.web.deps import COOKIE, CsrfUser, WebRoute, WebTx, refuse_cross_origin, render, safe_next

router = APIRouter(route_class=WebRoute, include_in_schema=False)
LOGIN_COOKIE = "orrery_login"
LOGIN_FIELD = "login_token"
LOGIN_FORM_TTL_SECONDS = 2 * 3600
"""How long a sign-in form stays usable; an older one is refused and shown again, fresh."""
STALE_FORM = "this sign-in form has expired or did not come from this site: sign in again"


def _sign(nonce: str, secret: str) -> str:
    return hmac.new(secret.encode(), f"login:{nonce}".encode(), "sha256").hexdigest()


def _login_form(request: Request, secret: str, status_code: int = 200, **context: Any) -> Response:
    """The sign-in form with its login token; the browser's nonce is kept (several tabs work)."""
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    if not 16 <= len(nonce) <= 64 or not nonce.replace("-", "").replace("_", "").isalnum():
        nonce = secrets.token_urlsafe(24)
    response = render(request, "login.html", status_code, login_token=_sign(nonce, secret), **context)
    response.set_cookie(
        LOGIN_COOKIE,
        nonce,
        max_age=LOGIN_FORM_TTL_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/login",
    )
    return response


def _login_token_ok(request: Request, sent: str, secret: str) -> bool:
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    return bool(nonce and sent) and hmac.compare_digest(sent, _sign(nonce, secret))


def _signed_in(request: Request, token: str, next_page: str | None = None) -> Response:
    """The cookie, and back to the page that asked for a sign-in (a path on this site only)."""
    response = RedirectResponse(safe_next(next_page), status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(web_tokens.SESSION_TTL.total_seconds()),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.get("/login")
async def login_page(
    request: Request,
    settings: SettingsDep,
    next: Annotated[str, Query(max_length=2000)] = "",  # noqa: A002
) -> Response:
    """The sign-in form (`next`: the page to return to)."""
    return _login_form(request, settings.secret_key, next=safe_next(next))


@router.post("/login")
async def login(
    request: Request,
    session: WebTx,
    settings: SettingsDep,
    api_key: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",  # noqa: A002
    login_token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Check the API key, start a browser session and go to the app (never from another site's
    form: its `Origin` is refused, and without our form's login token nothing is checked)."""
    refuse_cross_origin(request)
    secret = settings.secret_key
    if not _login_token_ok(request, login_token, secret):
        return _login_form(request, secret, 403, error=STALE_FORM, next=safe_next(next))
    try:
        token = await web_tokens.sign_in_with_api_key(session, api_key, secret)
    except AuthenticationError as exc:
        return _login_form(request, secret, 401, error=str(exc), next=safe_next(next))
    return _signed_in(request, token, next)


@router.get("/login/link")
async def login_link(
    request: Request,
    session: WebTx,
    settings: SettingsDep,
    token: Annotated[str, Query(max_length=200)] = "",
    next: Annotated[str, Query(max_length=2000)] = "",  # noqa: A002
) -> Response:
    """A one-time sign-in link (from `orrery web link` / `make run`)."""
    try:
        session_token = await web_tokens.redeem_login_link_token(session, token, settings.secret_key)
    except AuthenticationError as exc:
        return _login_form(request, settings.secret_key, 401, error=str(exc), next=safe_next(next))
    return _signed_in(request, session_token, next)


@router.post("/logout")
async def logout(request: Request, web: CsrfUser, session: WebTx, settings: SettingsDep) -> Response:
    """End the browser session everywhere and forget the cookie."""
    await web_tokens.end_web_session(session, request.cookies.get(COOKIE, ""), settings.secret_key)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response
