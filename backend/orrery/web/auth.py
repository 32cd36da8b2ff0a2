"""Signing in and out of the web app: an API key posted to `/login`, or a one-time link printed by
`orrery web link`; both set an HttpOnly, SameSite=Strict cookie (Secure over HTTPS)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from orrery.errors import AuthenticationError
from orrery.repo import web_tokens
from orrery.services.deps import SettingsDep
from orrery.web.deps import COOKIE, CsrfUser, WebRoute, WebTx, refuse_cross_origin, render, safe_next

router = APIRouter(route_class=WebRoute, include_in_schema=False)


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
async def login_page(request: Request, next: Annotated[str, Query(max_length=2000)] = "") -> Response:  # noqa: A002
    """The sign-in form (`next`: the page to return to)."""
    return render(request, "login.html", next=safe_next(next))


@router.post("/login")
async def login(
    request: Request,
    session: WebTx,
    settings: SettingsDep,
    api_key: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",  # noqa: A002
) -> Response:
    """Check the API key, start a browser session and go to the app (never from another site's form)."""
    refuse_cross_origin(request)
    try:
        token = await web_tokens.sign_in_with_api_key(session, api_key, settings.secret_key)
    except AuthenticationError as exc:
        return render(request, "login.html", status_code=401, error=str(exc), next=safe_next(next))
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
        return render(request, "login.html", status_code=401, error=str(exc), next=safe_next(next))
    return _signed_in(request, session_token, next)


@router.post("/logout")
async def logout(request: Request, web: CsrfUser, session: WebTx, settings: SettingsDep) -> Response:
    """End the browser session everywhere and forget the cookie."""
    await web_tokens.end_web_session(session, request.cookies.get(COOKIE, ""), settings.secret_key)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response
