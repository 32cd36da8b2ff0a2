"""Engine and session factory for SQLite (embedded) and PostgreSQL (production).

SQLite gets `foreign_keys=ON` (else cascades silently do nothing), WAL and a busy timeout on every
connection, so concurrent writers wait instead of failing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from backend.config import Settings


def _sqlite_pragmas(busy_timeout_ms: int) -> Any:
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.close()

    return on_connect


def make_engine(settings: Settings) -> AsyncEngine:
    """Create the async engine the URL asks for, tuned for its dialect."""
    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, echo=settings.db_echo)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas(settings.sqlite_busy_timeout_ms))
        return engine
    return create_async_engine(
        url, echo=settings.db_echo, pool_size=settings.db_pool_size, pool_pre_ping=True
    )


@dataclass(frozen=True)
class Database:
    """An engine plus the session factory built on it; one per process (or per test)."""

    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        """Build the engine and an `expire_on_commit=False` session factory."""
        engine = make_engine(settings)
        return cls(engine, async_sessionmaker(engine, expire_on_commit=False))

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.engine.dialect.name

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session in one transaction: committed on success, rolled back on any error."""
        async with self.sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
