"""Typed dependencies shared by every route: settings, a DB session, the authenticated user."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from backend.config import Settings
from backend.db.engine import Database
from backend.db.models import User
from backend.errors import AuthenticationError
from backend.repo.identity import authenticate


def get_database(request: Request) -> Database:
    """The process-wide database created by the app's lifespan."""
    database: Database = request.app.state.db
    return database


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was built with."""
    settings: Settings = request.app.state.settings
    return settings


async def get_session(database: Annotated[Database, Depends(get_database)]) -> AsyncIterator[AsyncSession]:
    """A session for one request, committed when the route returns without error."""
    async with database.transaction() as session:
        yield session


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
SessionDep = Annotated[AsyncSession, Depends(get_session)]


_BEARER = HTTPBearer(auto_error=False, description="An Orrery API key: `Authorization: Bearer orr_...`")
_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, description="An Orrery API key, as a header")


async def get_current_user(
    request: Request,
    session: SessionDep,
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
    return await authenticate(session, key, settings.secret_key)


CurrentUser = Annotated[User, Depends(get_current_user)]
