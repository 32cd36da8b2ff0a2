"""Sign-in for the web app: one-time login links and browser session tokens.

Tokens are random (`secrets`), shown once, and stored only as an HMAC keyed by the server secret,
like API keys. A session made from an API key ends when that key is revoked; so do the user's
login links (used or not) and the sessions they opened.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import ApiKey, User, WebToken
from orrery.errors import AuthenticationError
from orrery.repo.identity import authenticate, get_user
from orrery.security import hash_key

LOGIN_LINK_TTL = timedelta(minutes=15)
SESSION_TTL = timedelta(days=7)


@dataclass(frozen=True)
class WebSession:
    """A signed-in browser: the user and the token's hash (the CSRF token derives from it)."""

    user: User
    token_hash: str


def _new_token() -> str:
    return secrets.token_urlsafe(32)


async def issue_login_link_token(
    session: AsyncSession, user_id: uuid.UUID, server_secret: str, ttl: timedelta = LOGIN_LINK_TTL
) -> str:
    """A one-time sign-in token for `user_id` (for a link printed in the terminal)."""
    await get_user(session, user_id)
    token = _new_token()
    session.add(
        WebToken(
            user_id=user_id,
            kind="login",
            token_hash=hash_key(token, server_secret),
            expires_at=utcnow() + ttl,
        )
    )
    await session.flush()
    return token


async def redeem_login_link_token(session: AsyncSession, token: str, server_secret: str) -> str:
    """Use a login link token once; returns a new browser session token."""
    now = utcnow()
    used = (
        await session.execute(
            update(WebToken)
            .where(
                WebToken.token_hash == hash_key(token[:200], server_secret),
                WebToken.kind == "login",
                WebToken.used_at.is_(None),
                WebToken.revoked_at.is_(None),
                WebToken.expires_at > now,
            )
            .values(used_at=now)
            .returning(WebToken.user_id)
        )
    ).scalar_one_or_none()
    if used is None:
        raise AuthenticationError("this sign-in link is unknown, expired or already used")
    return await _start(session, used, None, server_secret)


async def sign_in_with_api_key(session: AsyncSession, api_key: str, server_secret: str) -> str:
    """Check an API key and start a browser session tied to it."""
    user = await authenticate(session, api_key.strip(), server_secret)
    key_id = (
        await session.execute(
            select(ApiKey.id).where(ApiKey.key_hash == hash_key(api_key.strip(), server_secret))
        )
    ).scalar_one()
    return await _start(session, user.id, key_id, server_secret)


async def _start(
    session: AsyncSession, user_id: uuid.UUID, api_key_id: uuid.UUID | None, server_secret: str
) -> str:
    await session.execute(  # housekeeping: the user's expired tokens go (indexed by user)
        delete(WebToken).where(WebToken.user_id == user_id, WebToken.expires_at < utcnow())
    )
    token = _new_token()
    session.add(
        WebToken(
            user_id=user_id,
            api_key_id=api_key_id,
            kind="session",
            token_hash=hash_key(token, server_secret),
            expires_at=utcnow() + SESSION_TTL,
        )
    )
    await session.flush()
    return token


async def resolve_web_session(session: AsyncSession, token: str, server_secret: str) -> WebSession:
    """The signed-in user for a session cookie (one query), or `AuthenticationError`."""
    token_hash = hash_key(token[:200], server_secret)
    row = (
        await session.execute(
            select(User)
            .join(WebToken, WebToken.user_id == User.id)
            .outerjoin(ApiKey, ApiKey.id == WebToken.api_key_id)
            .where(
                WebToken.token_hash == token_hash,
                WebToken.kind == "session",
                WebToken.revoked_at.is_(None),
                WebToken.expires_at > utcnow(),
                (WebToken.api_key_id.is_(None)) | (ApiKey.revoked_at.is_(None)),
            )
        )
    ).scalar_one_or_none()
    if row is None:
        raise AuthenticationError("not signed in, or the browser session has ended")
    return WebSession(row, token_hash)


async def end_web_session(session: AsyncSession, token: str, server_secret: str) -> None:
    """Sign out: the session token stops working everywhere at once."""
    await session.execute(
        update(WebToken)
        .where(WebToken.token_hash == hash_key(token[:200], server_secret), WebToken.kind == "session")
        .values(revoked_at=utcnow())
    )
