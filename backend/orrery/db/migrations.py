"""Alembic, driven from code: upgrade, downgrade, and the schema check the app runs at start.

The Alembic commands run their own event loop (see `alembic/env.py`), so async callers hand them
to a worker thread. The start-up check (`ensure_current`) never imports Alembic: it reads the head
from the migration files and the database's revision with one query, so a CLI call stays cheap.
"""

from __future__ import annotations

import ast
import asyncio
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from orrery.errors import DatabaseNotMigratedError
from orrery.resources import shipped_dir

if TYPE_CHECKING:
    from alembic.config import Config

ALEMBIC_DIR = shipped_dir("alembic")


FULL_TEXT_OBJECTS = (
    "kb_entries_fts",
    "search_vector",
    "ix_kb_entries_search_vector",
    "messages_fts",
    "ix_messages_search_vector",
    "recall_fts",
    "ix_messages_session_search",
    "chat_terms",
    "ix_messages_chat_terms",
)
"""Created by raw SQL in migrations 0003, 0004cq, 0020rf, 0026pg and 0027ct (FTS5 / tsvector / GIN),
not by the ORM models."""


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Autogenerate filter: hide the full-text objects (and FTS5's shadow tables)."""
    return not (name and name.startswith(FULL_TEXT_OBJECTS))


def alembic_config(database_url: str) -> Config:
    """An Alembic config pointing at this project's migration chain and the given database."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def _revision_ids(path: Path) -> tuple[str | None, set[str]]:
    """(revision, down revisions) of one migration file, read from its literal assignments."""
    found: dict[str, object] = {}
    targets: list[ast.expr]
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                found[target.id] = ast.literal_eval(value)
    down = found.get("down_revision")
    downs = {str(d) for d in down} if isinstance(down, list | tuple) else {str(down)} if down else set()
    revision = found.get("revision")
    return (None if revision is None else str(revision)), downs


@cache
def head_revision() -> str:
    """The newest revision of the shipped migration chain: the one no other revision follows.

    Read from the files' `revision`/`down_revision` lines (what Alembic reads), without importing
    Alembic; tests/db/test_head_revision.py checks it against Alembic's own answer."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted((shipped_dir("alembic") / "versions").glob("*.py")):
        revision, downs = _revision_ids(path)
        if revision is not None:
            revisions.add(revision)
            parents.update(downs)
    heads = revisions - parents
    assert len(heads) == 1, f"the migration chain must have one head, found {sorted(heads)}"
    return heads.pop()


def upgrade(database_url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision` (blocking; run it in a thread from async code)."""
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    """Revert migrations down to `revision` (`base` removes every table)."""
    from alembic import command

    command.downgrade(alembic_config(database_url), revision)


async def upgrade_async(database_url: str, revision: str = "head") -> None:
    """`upgrade` for callers that already run an event loop."""
    await asyncio.to_thread(upgrade, database_url, revision)


async def downgrade_async(database_url: str, revision: str) -> None:
    """`downgrade` for callers that already run an event loop."""
    await asyncio.to_thread(downgrade, database_url, revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at (Alembic's `alembic_version` row), or None when never migrated."""
    async with engine.connect() as conn:
        if not await conn.run_sync(lambda sync: inspect(sync).has_table("alembic_version")):
            return None
        rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalars().all()
    if len(rows) > 1:
        raise DatabaseNotMigratedError(f"The database has several revisions {sorted(rows)}; expected one.")
    return str(rows[0]) if rows else None


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
