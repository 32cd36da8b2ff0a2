"""Shared benchmark plumbing: fresh migrated databases on SQLite or a throwaway PostgreSQL."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from orrery.config import Settings
from orrery.db.migrations import upgrade
from tests.support.postgres import ThrowawayPostgres


def bench_settings(url: str) -> Settings:
    """Settings for a benchmark database (no `.env`)."""
    return Settings(_env_file=None, database_url=url, secret_key="bench")  # type: ignore[call-arg]


def fresh_url(
    dialect: str, name: str, tmp: Path, pg: ThrowawayPostgres | None, *, migrate: bool = True
) -> str:
    """A new database on the dialect, migrated unless `migrate=False` (another checkout migrates it)."""
    if dialect == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp / (name + '.db')}"
    else:
        assert pg is not None
        asyncio.run(pg.execute(f"CREATE DATABASE {name}"))
        url = pg.url(name)
    if migrate:
        upgrade(url)
    return url


def median_ms(samples: list[float]) -> float:
    """Median of timings in seconds, as milliseconds."""
    return statistics.median(samples) * 1000


@contextmanager
def databases(dialects: list[str]) -> Iterator[Callable[..., str]]:
    """Yield `fresh(dialect, name) -> url` for new migrated databases in a temporary folder; a
    throwaway PostgreSQL is started only when a PostgreSQL dialect is asked for, and stopped after."""
    pg = ThrowawayPostgres().start() if "postgresql" in dialects else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            yield lambda dialect, name, migrate=True: fresh_url(dialect, name, Path(tmp), pg, migrate=migrate)
    finally:
        if pg is not None:
            pg.stop()
