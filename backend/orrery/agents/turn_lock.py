"""One turn at a time per chat session, in this process and across processes.

In-process, an asyncio lock per session. On PostgreSQL, also a session-level advisory lock, so turns on
one session from several workers (or replicas) never interleave. All of a process's advisory locks
live on one dedicated connection (its own one-connection engine, outside the request pool, checked out
only while the process holds a lock), so a turn holds no request connection while it waits or while
the model runs; if that connection drops, PostgreSQL releases its locks and the next turn reconnects.
SQLite serves one server process (`orrery serve` holds a file lock, `orrery.ops.server_lock`;
`--workers` needs PostgreSQL): the asyncio lock suffices, and other processes' writes (the CLI) are
serialised by `BEGIN IMMEDIATE`. Every lock dies with its process, so a free lock means no live
process runs a turn on the session (`live`): how crash leftovers are recognised.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from orrery.config import Settings
from orrery.db.engine import postgres_engine
from orrery.db.failures import ConnectionLost
from orrery.errors import ServiceUnavailableError

BUSY_SESSION = "another turn on this session is still running; retry shortly"


def advisory_key(session_id: uuid.UUID) -> int:
    """The session's advisory-lock key: its first 8 bytes as a signed bigint."""
    return int.from_bytes(session_id.bytes[:8], "big", signed=True)


class TurnLocks:
    """`async with locks.hold(session_id):` around a turn."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._local: weakref.WeakValueDictionary[uuid.UUID, asyncio.Lock] = weakref.WeakValueDictionary()
        self._engine: AsyncEngine | None = None
        self._conn: AsyncConnection | None = None
        self._conn_lock = asyncio.Lock()
        self._held = 0
        if settings.dialect == "postgresql":
            self._engine = postgres_engine(settings.database_url, pool_size=1, max_overflow=0)

    def _lock(self, session_id: uuid.UUID) -> asyncio.Lock:
        lock = self._local.get(session_id)
        if lock is None:
            lock = asyncio.Lock()
            self._local[session_id] = lock
        return lock

    @asynccontextmanager
    async def hold(self, session_id: uuid.UUID) -> AsyncIterator[None]:
        """Wait (up to `turn_wait_seconds`, then 503) until no other turn runs on the session."""
        deadline = time.monotonic() + self.settings.turn_wait_seconds
        lock = self._lock(session_id)
        try:
            async with asyncio.timeout(self.settings.turn_wait_seconds):
                await lock.acquire()
        except TimeoutError:
            raise ServiceUnavailableError(BUSY_SESSION, self.settings.retry_after_seconds) from None
        try:
            if self._engine is not None:
                await self._advisory_acquire(advisory_key(session_id), deadline)
            try:
                yield
            finally:
                if self._engine is not None:
                    await self._advisory_release(advisory_key(session_id))
        finally:
            lock.release()

    async def live(self, session_id: uuid.UUID) -> bool:
        """Whether a live process runs a turn on the session now (its lock is held: here, or on
        PostgreSQL by any process). A lock dies with its process, so a turn whose lock is free has no
        live owner: its unanswered user message is a crash leftover (`turn_store`)."""
        if self._lock(session_id).locked():
            return True
        if self._engine is not None:
            key = advisory_key(session_id)
            if not await self._run("SELECT pg_try_advisory_lock($1)", key, self._held + 1):
                return True  # another process holds it
            await self._advisory_release(key)
        return self._lock(session_id).locked()  # a turn of this process may have started meanwhile

    async def _run(self, sql: str, key: int, held_after: int) -> bool:
        """Run a lock statement on the lock connection; `held_after` says how many locks this process
        holds once it succeeds: at 0 the connection goes back to its pool (it holds nothing). The
        statement goes to asyncpg itself: one fixed statement on a connection nothing else uses (in
        `AUTOCOMMIT`, under `_conn_lock`) needs none of SQLAlchemy's per-statement work, and two of
        them run every turn."""
        assert self._engine is not None
        async with self._conn_lock:
            if self._conn is None or self._conn.closed:
                self._conn = await self._engine.connect()
                self._conn = await self._conn.execution_options(isolation_level="AUTOCOMMIT")
            driver: Any = None
            try:
                driver = (await self._conn.get_raw_connection()).driver_connection
                ok = bool(await driver.fetchval(sql, key))
            except Exception as error:
                self._held = 0
                await self._drop(broken=True)
                if driver is not None and driver.is_closed():
                    raise ConnectionLost("the turn lock's connection is closed") from error
                raise
            self._held = held_after if ok else self._held
            if self._held == 0:
                await self._drop()
            return ok

    async def _advisory_acquire(self, key: int, deadline: float) -> None:
        delay = 0.01
        while not await self._run("SELECT pg_try_advisory_lock($1)", key, self._held + 1):
            if time.monotonic() + delay > deadline:
                raise ServiceUnavailableError(BUSY_SESSION, self.settings.retry_after_seconds)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.2)

    async def _advisory_release(self, key: int) -> None:
        with contextlib.suppress(Exception):  # the connection is gone: PostgreSQL released its locks
            await self._run("SELECT pg_advisory_unlock($1)", key, max(self._held - 1, 0))

    async def _drop(self, broken: bool = False) -> None:
        """Give the lock connection back to its pool; a `broken` one (its statement failed) is
        discarded instead, since the pool saw none of the driver's error."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                if broken:
                    await conn.invalidate()
                await conn.close()
            except Exception:
                with contextlib.suppress(Exception):
                    await conn.invalidate()

    async def close(self) -> None:
        """Release every lock (by closing the connection) and the engine."""
        async with self._conn_lock:
            await self._drop()
        if self._engine is not None:
            await self._engine.dispose()
