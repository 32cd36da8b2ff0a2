"""SQLite for the async engine, run on the event loop instead of a thread per connection.

aiosqlite gives every connection a thread and hands each call's result back through the event
loop; SQLAlchemy makes four such calls a statement (cursor, execute, fetch, close), which cost ~0.5 ms
of CPU for a one-row SELECT that SQLite itself answers in ~0.01 ms (`python -m bench.sqlite_driver`).
Orrery's statements touch a few rows of a local file, so here they run inline, behind the same
aiosqlite-shaped interface SQLAlchemy's `sqlite+aiosqlite` dialect drives (given as its
`async_creator`).

The one call that could hold the loop is waiting for another process's write lock. SQLite's own busy
handler would sleep inside the call, so it is off (`busy_timeout` 0) and a busy statement is retried
here with `asyncio.sleep`, for as long as the configured busy timeout: the same wait, while the loop
serves everyone else.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
FIRST_WAIT = 0.001
LONGEST_WAIT = 0.05


def is_busy(error: BaseException | None) -> bool:
    """SQLite's error for a lock another connection holds (what waiting can cure)."""
    text = str(error).lower()
    return "database is locked" in text or "database is busy" in text


async def _patiently(call: Callable[..., T], patience: float, *args: Any) -> T:
    """`call(*args)`, retried while SQLite is busy, for up to `patience` seconds in all."""
    deadline: float | None = None
    wait = FIRST_WAIT
    while True:
        try:
            return call(*args)
        except sqlite3.OperationalError as exc:
            now = time.monotonic()
            deadline = now + patience if deadline is None else deadline
            if not is_busy(exc) or now >= deadline:
                raise
            await asyncio.sleep(min(wait, deadline - now))
            wait = min(wait * 2, LONGEST_WAIT)


class Cursor:
    """An aiosqlite-shaped cursor over a `sqlite3.Cursor`."""

    def __init__(self, cursor: sqlite3.Cursor, timeout: float) -> None:
        self._cursor, self._timeout = cursor, timeout

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._cursor.close()

    async def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        await _patiently(self._cursor.execute, self._timeout, sql, parameters)
        return self

    async def executemany(self, sql: str, parameters: Iterable[Any]) -> Cursor:
        await _patiently(self._cursor.executemany, self._timeout, sql, list(parameters))
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value


class _Now:
    """What SQLAlchemy's isolation-level setter puts on aiosqlite's call queue, run at once."""

    def put_nowait(self, item: tuple[asyncio.Future[Any], Callable[[], Any]]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:  # the setter awaits the future and re-raises
            future.set_exception(exc)


class Connection:
    """An aiosqlite-shaped connection over a `sqlite3.Connection` (`_conn`, `_tx` and `_connection`
    are the attributes SQLAlchemy's aiosqlite dialect reads)."""

    def __init__(self, conn: sqlite3.Connection, timeout: float) -> None:
        self._conn: sqlite3.Connection | None = conn
        self._tx = _Now()
        self._timeout = timeout

    @property
    def _connection(self) -> sqlite3.Connection | None:
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("no active connection")
        return self._conn

    def cursor(self) -> Cursor:
        """A cursor (SQLAlchemy enters it with `async with`, as aiosqlite's)."""
        return Cursor(self._open().cursor(), self._timeout)

    async def fetch_all(self, sql: str, parameters: Sequence[Any]) -> list[Any]:
        """Run one statement and read all its rows: `Direct`'s way in, without a cursor object."""
        cursor = await _patiently(self._open().execute, self._timeout, sql, parameters)
        try:
            return cursor.fetchall()
        finally:
            cursor.close()

    async def commit(self) -> None:
        await _patiently(self._open().commit, self._timeout)

    async def rollback(self) -> None:
        self._open().rollback()

    async def create_function(self, *args: Any, **kw: Any) -> None:
        self._open().create_function(*args, **kw)

    @property
    def isolation_level(self) -> str | None:
        return self._open().isolation_level

    async def close(self) -> None:
        self.stop()

    def stop(self) -> None:
        """Close at once (SQLAlchemy's terminate)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def creator(database: str, busy_timeout_ms: int) -> Callable[[], Any]:
    """The engine's `async_creator`: a connection to `database` (a path, or `:memory:`), whose busy
    statements are retried for `busy_timeout_ms`."""

    async def connect() -> Connection:
        conn = sqlite3.connect(database, check_same_thread=False, isolation_level=None, timeout=0)
        return Connection(conn, busy_timeout_ms / 1000)

    return connect
