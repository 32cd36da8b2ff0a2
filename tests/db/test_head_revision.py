"""The start-up check reads the head revision from the migration files without Alembic; it must
name the same head Alembic does, and the database's revision the same way Alembic reads it."""

from __future__ import annotations

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from orrery.db.engine import Database
from orrery.db.migrations import alembic_config, current_revision, head_revision


def test_head_revision_is_alembics_head() -> None:
    assert head_revision() == ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


async def test_current_revision_is_what_alembic_reads(db: Database) -> None:
    async with db.engine.connect() as conn:
        alembics = await conn.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())
    assert await current_revision(db.engine) == alembics == head_revision()
