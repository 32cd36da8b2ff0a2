"""Typed dependencies shared by every route: settings, read and write DB sessions, the authenticated user.

Both session dependencies are function-scoped: they close (a write commits) when the route function
returns, BEFORE the status line is sent, so a 2xx means the write is committed and a failed commit
answers 503 + `Retry-After` instead. Reads (`ReadSessionDep`) never take SQLite's write lock.

Authentication reads the key in its own short session and releases it before the route runs, so a
chat turn never holds a connection for its API key; `last_used_at` is stamped (at most once a minute)
in a separate short transaction whose failure is logged and never fails the request.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.failures import as_unavailable, outage_line
from orrery.db.models import User
from orrery.errors import AuthenticationError, ServiceUnavailableError
from orrery.repo.identity import key_owner, key_use_is_stale, record_key_use

log = logging.getLogger("orrery.api")


async def get_database(request: Request) -> Database:
    """The process-wide database created by the app's lifespan. `async`, as each dependency here:
    FastAPI runs a plain `def` dependency in its thread pool, two thread hand-offs a request."""
    database: Database = request.app.state.db
    return database


async def get_settings_dep(request: Request) -> Settings:
    """The settings the app was built with."""
    settings: Settings = request.app.state.settings
    return settings


async def get_session(
    database: Annotated[Database, Depends(get_database)],
    settings: Annotated[Settings, Depends(get_settings_dep)],
) -> AsyncIterator[AsyncSession]:
    """A write transaction for one route, committed when it returns without error; a failed commit
    is a 503 + `Retry-After` (the route's own errors pass through unchanged)."""
    committing = False
    try:
        async with database.transaction() as session:
            yield session
            committing = True
    except Exception as exc:
        if not committing:
            raise
        if as_unavailable(exc) is not None:  # an outage: one line, not a traceback per request
            log.warning("commit failed; answering 503 (%s)", outage_line(exc))
        else:
            log.warning("commit failed; answering 503", exc_info=exc)
        raise ServiceUnavailableError(COMMIT_FAILED, settings.retry_after_seconds) from exc


async def get_read_session(
    database: Annotated[Database, Depends(get_database)],
) -> AsyncIterator[AsyncSession]:
    """A session that never writes (deferred `BEGIN` on SQLite, no write lock; changes are discarded)."""
    async with database.readers() as session:
        yield session


COMMIT_FAILED = "the change could not be saved; nothing was stored, retry shortly"
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
WriteSessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
"""For routes that write: committed before the response is sent."""
ReadSessionDep = Annotated[AsyncSession, Depends(get_read_session, scope="function")]
"""For routes that only read: never takes the write lock, released before the response is sent."""
SessionDep = WriteSessionDep


_BEARER = HTTPBearer(auto_error=False, description="An Orrery API key: `Authorization: Bearer orr_...`")
_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, description="An Orrery API key, as a header")


async def get_current_user(
    request: Request,
    database: Annotated[Database, Depends(get_database)],
    settings: SettingsDep,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
    x_api_key: Annotated[str | None, Depends(_API_KEY)],
) -> User:
    """The user owning the API key in `Authorization: Bearer <key>` or `X-API-Key` (both declared
    as security schemes, so `/docs` has an Authorize button)."""
    authorization = request.headers.get("authorization")
    key = x_api_key
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value:
            raise AuthenticationError("Authorization header must be 'Bearer <api key>'")
        key = value.strip()
    if not key:
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <api key>'")
    async with database.single() as session:  # one statement: no transaction around it
        api_key, user = await key_owner(session, key, settings.secret_key)
    if key_use_is_stale(api_key):
        try:
            async with database.transaction() as session:
                await record_key_use(session, api_key.id)
        except Exception:  # bookkeeping only: never fail the request over it
            log.warning("could not record the use of API key %s", api_key.prefix, exc_info=True)
    return user


CurrentUser = Annotated[User, Depends(get_current_user)]
