"""Engine and session factory for SQLite (embedded) and PostgreSQL (production).

SQLite gets `foreign_keys=ON` (else cascades silently do nothing), WAL and a busy timeout on every
connection. SQLAlchemy, not the driver, emits `BEGIN`: read sessions take a deferred `BEGIN`, write
transactions `BEGIN IMMEDIATE`, so a writer takes the write lock before its first statement and never
fails half-way with "database is locked" (a deferred reader upgrading to a writer cannot wait); a
write that is one statement runs without a transaction (`statement()`) and takes the lock for itself.
In one process, transactions also queue on an asyncio lock before they take a pooled connection.
A write finding another process's lock waits up to `sqlite_busy_timeout_ms`. Both dialects use a
bounded pool wait (`db_pool_timeout_seconds`); the API answers a pool or database outage with 503 +
`Retry-After`. `readers` sessions never write at all (see `ReadOnlySession`), so a read never waits
for a writer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session

from orrery.config import Settings
from orrery.db import sqlite_inline
from orrery.db.direct import begin_on_driver

WRITE_OPTION = "orrery_write"
"""Execution option marking a connection whose transaction begins with `BEGIN IMMEDIATE` on SQLite."""
SINGLE_OPTION = "orrery_single"
"""Execution option marking a connection of `Database.single`: no transaction around its statement
(on SQLite no `BEGIN` is emitted; PostgreSQL uses the `AUTOCOMMIT` isolation level)."""

_writing: ContextVar[bool] = ContextVar("orrery_writing", default=False)


def _sqlite_pragmas(busy_timeout_ms: int) -> Any:
    """`busy_timeout_ms` is SQLite's own wait for a lock (0 for the inline driver, which waits itself)."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself (see `_sqlite_begin`)
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.close()

    return on_connect


def _sqlite_begin(conn: Connection) -> None:
    options = conn.get_execution_options()
    if options.get(SINGLE_OPTION):  # `Database.single`: the driver is in autocommit mode already
        return
    sql = "BEGIN IMMEDIATE" if options.get(WRITE_OPTION) else "BEGIN"
    if not begin_on_driver(conn, sql):
        conn.exec_driver_sql(sql)


def make_engine(settings: Settings) -> AsyncEngine:
    """Create the async engine the URL asks for, tuned for its dialect."""
    url = make_url(settings.database_url)
    pool: dict[str, Any] = {
        "pool_size": settings.db_pool_size,
        "max_overflow": settings.db_max_overflow,
        "pool_timeout": settings.db_pool_timeout_seconds,
    }
    if url.get_backend_name() == "sqlite":
        memory = not url.database or url.database == ":memory:"
        if not memory:
            Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
        busy_ms = settings.sqlite_busy_timeout_ms
        options: dict[str, Any] = {} if memory else dict(pool)
        if settings.sqlite_driver == "inline":
            options["async_creator"] = sqlite_inline.creator(
                ":memory:" if memory else str(url.database), busy_ms
            )
            busy_ms = 0
        engine = create_async_engine(url, echo=settings.db_echo, **options)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas(busy_ms))
        event.listen(engine.sync_engine, "begin", _sqlite_begin)
        return engine
    return postgres_engine(settings.database_url, echo=settings.db_echo, **pool)


GENERIC_PLANS: dict[str, Any] = {"server_settings": {"plan_cache_mode": "force_generic_plan"}}
"""Sent with each new connection's startup (no round trip). The driver prepares every statement once
per connection; by default PostgreSQL then plans it afresh for each of its first five runs there and
keeps one generic plan only from the sixth. Every statement of a turn ended on its generic plan
(pg_stat_statements: 36 plans for 366 runs over 6 connections), so those first plans were pure cost,
and most of a connection's life when the pool opens connections beyond its size under load: at 2
workers x 50 sessions, 65% of statements were planned, planning took ~45% of their time, and forcing
the generic plan cut PostgreSQL's CPU a turn by a quarter to a half. A generic plan cannot use a
partial index whose condition is a bound parameter: such conditions are written as SQL literals
(`literal_column("'failed'")`)."""


def postgres_engine(url: str, **options: Any) -> AsyncEngine:
    """An asyncpg engine whose pool checks each connection before handing it out, by asking the
    connection, not the server, whether it is alive. A server that restarts or ends a backend
    closes its socket, the event loop sees it, and the connection says it is closed; the pool then
    drops it and every connection older than it, as a failed ping always did. SQLAlchemy's own
    ping costs three round trips per checkout (BEGIN, `;`, ROLLBACK), ~6 checkouts a turn: ~7% of a
    turn's CPU. A connection that dies unseen (a network cut) fails its statement instead, which the
    pool also recovers from: a 503, not a 500.

    Each connection also plans a prepared statement once (`GENERIC_PLANS`)."""

    def ping(dbapi_connection: Any) -> bool:
        return not dbapi_connection.driver_connection.is_closed()

    engine = create_async_engine(url, pool_pre_ping=True, connect_args=GENERIC_PLANS, **options)
    engine.sync_engine.dialect.do_ping = ping  # type: ignore[method-assign]
    return engine


class ReadOnlySession(Session):
    """A session that never writes: flushes are skipped, so what a read path changes on its objects
    (a memo such as the knowledge decision or a running summary) stays in memory and is discarded at
    close. On SQLite it therefore never asks for the write lock (a deferred reader upgrading to a
    writer would wait for, or fail against, every other writer)."""

    def flush(self, objects: Any = None) -> None:
        return None

    def commit(self) -> None:
        """Nothing to commit: ends the (read) transaction, discarding in-memory changes."""
        self.rollback()


@dataclass(frozen=True)
class Database:
    """An engine plus the session factories built on it; one per process (or per test)."""

    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    """Read sessions (deferred `BEGIN` on SQLite); use `transaction()` to write."""
    writers: async_sessionmaker[AsyncSession]
    readers: async_sessionmaker[AsyncSession]
    """Sessions that never write (`ReadOnlySession`): what the API's GET routes use."""
    single: async_sessionmaker[AsyncSession]
    """Read-only sessions without a transaction, for reads that need no common snapshot (an API
    key's lookup, one search, a turn's reads under its session's turn lock): no `BEGIN` and no
    `COMMIT`, two round trips fewer. Each statement sees the database as it is then; use `readers`
    where several must agree (on SQLite; at PostgreSQL's READ COMMITTED level each statement of a
    transaction takes its own snapshot anyway) or where a savepoint is needed."""
    autocommit: async_sessionmaker[AsyncSession]
    """Sessions in `AUTOCOMMIT`, each statement its own transaction: see `statement()`."""
    _write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        """Build the engine and `expire_on_commit=False` session factories: reads, writes, read-only."""
        engine = make_engine(settings)
        writer = engine.execution_options(**{WRITE_OPTION: True})
        # SQLite's driver runs in autocommit mode (SQLAlchemy's BEGIN is ours): only skip the BEGIN,
        # since an isolation level set here would be reset to the driver's legacy mode on return
        sqlite = engine.dialect.name == "sqlite"
        autocommit = engine.execution_options(
            **{SINGLE_OPTION: True, **({} if sqlite else {"isolation_level": "AUTOCOMMIT"})}
        )
        return cls(
            engine,
            async_sessionmaker(engine, expire_on_commit=False),
            async_sessionmaker(writer, expire_on_commit=False),
            async_sessionmaker(engine, expire_on_commit=False, sync_session_class=ReadOnlySession),
            async_sessionmaker(autocommit, expire_on_commit=False, sync_session_class=ReadOnlySession),
            async_sessionmaker(autocommit, expire_on_commit=False),
        )

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.engine.dialect.name

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session in one transaction: committed on success, rolled back on any error.

        On SQLite the write lock is taken up front (`BEGIN IMMEDIATE`), one writer per process at a time.
        """
        if self.dialect != "sqlite" or _writing.get():
            async with self.writers() as session, session.begin():
                yield session
            return
        async with self._write_lock:
            token = _writing.set(True)
            try:
                session = await self._begin_immediate()
                try:
                    yield session
                    await session.commit()
                except BaseException:
                    await session.rollback()
                    raise
                finally:
                    await session.close()
            finally:
                _writing.reset(token)

    @asynccontextmanager
    async def statement(self) -> AsyncIterator[AsyncSession]:
        """A session for work that writes with one statement (atomic by itself), however many it
        reads first: each statement its own transaction (PostgreSQL's `AUTOCOMMIT`; SQLite's driver
        in autocommit mode), no `BEGIN` and no `COMMIT`. At READ COMMITTED a transaction would give
        the reads no common snapshot either, and on SQLite the one write takes the write lock for
        itself (no read lock held before it to upgrade)."""
        async with self.autocommit() as session:
            yield session
            await session.commit()  # flushes what the ORM holds; the statements committed already

    async def _begin_immediate(self) -> AsyncSession:
        """A write session holding the SQLite write lock. Another process's lock is waited for as
        any write waits (`ORRERY_SQLITE_BUSY_TIMEOUT_MS`), then `OperationalError` (a 503)."""
        session = self.writers()
        try:
            await session.connection()  # emits BEGIN IMMEDIATE
        except BaseException:
            await session.close()
            raise
        return session

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()
