"""The inline SQLite driver (the default): statements run on the event loop, and a write that waits
for another process's lock waits with the loop free, so other requests are served meanwhile; the
aiosqlite driver stays selectable (`ORRERY_SQLITE_DRIVER=aiosqlite`) and behaves the same."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from orrery.db.engine import Database
from tests.conftest import settings_for


def _copy(tmp_path: Path, template: Path) -> str:
    path = tmp_path / "inline.db"
    shutil.copy(template, path)
    return str(path)


@pytest.mark.parametrize("driver", ["inline", "aiosqlite"])
async def test_both_drivers_write_read_and_roll_back_alike(
    tmp_path: Path, sqlite_template: Path, driver: str
) -> None:
    path = _copy(tmp_path, sqlite_template)
    db = Database.from_settings(settings_for(f"sqlite+aiosqlite:///{path}", sqlite_driver=driver))
    try:
        async with db.transaction() as s:
            await s.execute(text("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"))
            await s.execute(text("INSERT INTO notes (body) VALUES (:b)"), [{"b": "one"}, {"b": "two"}])
        with pytest.raises(RuntimeError):
            async with db.transaction() as s:
                await s.execute(text("INSERT INTO notes (body) VALUES ('lost')"))
                raise RuntimeError("rolled back")
        async with db.sessions() as s:
            rows = (await s.execute(text("SELECT body FROM notes ORDER BY id"))).scalars().all()
        assert rows == ["one", "two"]
    finally:
        await db.dispose()


@asynccontextmanager
async def _locked_elsewhere(tmp_path: Path, template: Path, busy_ms: int) -> AsyncIterator[Any]:
    """A served database (its connections made the file WAL) whose write lock another process's
    writer holds; yields the database and that writer's connection."""
    path = _copy(tmp_path, template)
    db = Database.from_settings(settings_for(f"sqlite+aiosqlite:///{path}", sqlite_busy_timeout_ms=busy_ms))
    async with db.sessions() as s:
        await s.execute(text("SELECT 1"))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield db, other
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
        await db.dispose()


async def test_a_write_waiting_for_another_process_leaves_the_loop_free(
    tmp_path: Path, sqlite_template: Path
) -> None:
    async with _locked_elsewhere(tmp_path, sqlite_template, 10_000) as (db, other):

        async def write() -> None:
            async with db.transaction() as s:
                await s.execute(text("CREATE TABLE waited (id INTEGER)"))

        writing = asyncio.create_task(write())
        await asyncio.sleep(0.05)
        assert not writing.done()  # it waits for the lock...
        async with db.sessions() as s:  # ...while a read is served (WAL: readers never wait)
            assert (await s.execute(text("SELECT 1"))).scalar() == 1
        assert not writing.done()
        other.execute("ROLLBACK")
        await writing  # the lock freed, the write goes through
        async with db.sessions() as s:
            assert (await s.execute(text("SELECT count(*) FROM waited"))).scalar() == 0


async def test_a_lock_held_past_the_busy_timeout_fails_the_write(
    tmp_path: Path, sqlite_template: Path
) -> None:
    async with _locked_elsewhere(tmp_path, sqlite_template, 20) as (db, _other):
        with pytest.raises(OperationalError, match="locked"):
            async with db.transaction() as s:
                await s.execute(text("CREATE TABLE never (id INTEGER)"))
