"""Throwaway databases for tests: a migrated SQLite file by default, or a new database on a
PostgreSQL server you point at (`ORRERY_TESTKIT_DATABASE_URL` or `--orrery-database-url`)."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from orrery.db.migrations import upgrade_async


async def _admin(server_url: str, sql: str) -> None:
    """One statement on the server's maintenance database (CREATE/DROP DATABASE)."""
    import asyncpg

    url = make_url(server_url)
    conn: Any = await asyncpg.connect(
        host=url.host,
        port=url.port,
        user=url.username,
        password=url.password,
        database=url.database or "postgres",
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _on_server(server_url: str, name: str) -> str:
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


async def migrated_template(server_url: str | None, directory: Path) -> str:
    """Migrate once: a SQLite file in `directory`, or a template database on the server."""
    if server_url is None:
        path = directory / "orrery-template.db"
        await upgrade_async(f"sqlite+aiosqlite:///{path}")
        return str(path)
    name = f"orrery_tpl_{uuid.uuid4().hex[:12]}"
    await _admin(server_url, f"CREATE DATABASE {name}")
    await upgrade_async(_on_server(server_url, name))
    return name


@asynccontextmanager
async def throwaway_database(
    server_url: str | None = None, *, directory: Path, template: str | None = None
) -> AsyncIterator[str]:
    """The URL of a fresh, migrated database, removed afterwards (copied from `template` when given)."""
    if server_url is None:
        path = directory / f"orrery-{uuid.uuid4().hex[:8]}.db"
        if template is not None:
            await asyncio.to_thread(shutil.copy, template, path)
            yield f"sqlite+aiosqlite:///{path}"
        else:
            await upgrade_async(f"sqlite+aiosqlite:///{path}")
            yield f"sqlite+aiosqlite:///{path}"
        return
    name = f"orrery_t_{uuid.uuid4().hex[:12]}"
    await _admin(server_url, f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    try:
        if template is None:
            await upgrade_async(_on_server(server_url, name))
        yield _on_server(server_url, name)
    finally:
        await _admin(server_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def drop_template(server_url: str | None, template: str) -> None:
    """Remove a PostgreSQL template database (a SQLite template goes with its directory)."""
    if server_url is not None:
        await _admin(server_url, f"DROP DATABASE IF EXISTS {template} WITH (FORCE)")
