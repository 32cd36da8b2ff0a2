"""Alembic, driven from code: upgrade, downgrade, and the schema check the app runs at start.

The Alembic commands run their own event loop (see `alembic/env.py`), so async callers hand them
to a worker thread.
"""

from __future__ import annotations

import asyncio

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncEngine

from alembic import command
from backend.errors import DatabaseNotMigratedError
from backend.resources import shipped_dir

ALEMBIC_DIR = shipped_dir("alembic")


FULL_TEXT_OBJECTS = (
    "kb_entries_fts",
    "search_vector",
    "ix_kb_entries_search_vector",
    "messages_fts",
    "ix_messages_search_vector",
)
"""Created by raw SQL in migrations 0003 and 0004cq (FTS5 / tsvector), not by the ORM models."""


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Autogenerate filter: hide the full-text objects (and FTS5's shadow tables)."""
    return not (name and name.startswith(FULL_TEXT_OBJECTS))


def alembic_config(database_url: str) -> Config:
    """An Alembic config pointing at this project's migration chain and the given database."""
    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def head_revision() -> str:
    """The newest revision of the migration chain shipped with this code."""
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None, "the migration chain is empty"
    return head


def upgrade(database_url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision` (blocking; run it in a thread from async code)."""
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    """Revert migrations down to `revision` (`base` removes every table)."""
    command.downgrade(alembic_config(database_url), revision)


async def upgrade_async(database_url: str, revision: str = "head") -> None:
    """`upgrade` for callers that already run an event loop."""
    await asyncio.to_thread(upgrade, database_url, revision)


async def downgrade_async(database_url: str, revision: str) -> None:
    """`downgrade` for callers that already run an event loop."""
    await asyncio.to_thread(downgrade, database_url, revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    async with engine.connect() as conn:
        return await conn.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())


async def ensure_current(engine: AsyncEngine) -> None:
    """Refuse to run on a database that is not at the code's head revision."""
    current, head = await current_revision(engine), head_revision()
    if current == head:
        return
    where = engine.url.render_as_string(hide_password=True)
    state = "has no schema" if current is None else f"is at revision {current!r}"
    raise DatabaseNotMigratedError(
        f"The database {where} {state}, but this code needs revision {head!r}. "
        "Run `orrery db upgrade` (or `make migrate`) and start again."
    )
