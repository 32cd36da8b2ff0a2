"""The one migration chain upgrades, downgrades and upgrades again on both dialects."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from orrery.db.engine import Database
from orrery.db.migrations import (
    current_revision,
    downgrade_async,
    ensure_current,
    head_revision,
    include_name,
    upgrade_async,
)
from orrery.db.models import Base
from orrery.errors import DatabaseNotMigratedError
from tests.conftest import settings_for


async def _tables(database: Database) -> set[str]:
    async with database.engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_round_trip_upgrade_downgrade_upgrade(empty_db_url: str) -> None:
    database = Database.from_settings(settings_for(empty_db_url))
    try:
        assert await current_revision(database.engine) is None
        await upgrade_async(empty_db_url)
        assert await current_revision(database.engine) == head_revision()
        assert set(Base.metadata.tables) <= await _tables(database)

        await downgrade_async(empty_db_url, "base")
        assert await current_revision(database.engine) is None
        assert await _tables(database) <= {"alembic_version"}

        await upgrade_async(empty_db_url)
        assert set(Base.metadata.tables) <= await _tables(database)
    finally:
        await database.dispose()


async def test_schema_matches_models_after_upgrade(empty_db_url: str) -> None:
    """Autogenerate finds nothing to do: the migration and the ORM models agree."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    await upgrade_async(empty_db_url)
    database = Database.from_settings(settings_for(empty_db_url))
    try:
        async with database.engine.connect() as conn:
            diff = await conn.run_sync(
                lambda c: compare_metadata(
                    MigrationContext.configure(c, opts={"include_name": include_name}), Base.metadata
                )
            )
        assert diff == []
    finally:
        await database.dispose()


async def test_refuses_unmigrated_database_with_instructions(empty_db_url: str) -> None:
    database = Database.from_settings(settings_for(empty_db_url))
    try:
        with pytest.raises(DatabaseNotMigratedError, match="orrery db upgrade"):
            await ensure_current(database.engine)
    finally:
        await database.dispose()


async def test_refuses_outdated_database(db: Database) -> None:
    async with db.transaction() as session:
        from sqlalchemy import text

        await session.execute(text("UPDATE alembic_version SET version_num = 'old0'"))
    with pytest.raises(DatabaseNotMigratedError, match="'old0'"):
        await ensure_current(db.engine)


async def test_current_database_passes(db: Database) -> None:
    await ensure_current(db.engine)
