"""Shared benchmark plumbing: fresh migrated databases on SQLite or a throwaway PostgreSQL, and the
reference loop that puts CPU times measured on different machines (or minutes) on one scale."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
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


REFERENCE_LOOP_MS = 41.5
"""The reference loop's CPU time on the machine where issue 44's targets were set."""
LOOP_SIZE = 450_000


def reference_loop(n: int = LOOP_SIZE) -> int:
    """A fixed pure-Python workload (integer arithmetic, a dict update, a loop): what an
    interpreter-bound server spends its CPU on, so its time tracks the machine's speed for one."""
    counts: dict[int, int] = {}
    total = 0
    for i in range(n):
        key = i % 97
        counts[key] = counts.get(key, 0) + 1
        total = (total + i * i) % 1_000_003
    return total + len(counts)


def loop_ms(runs: int = 5) -> list[float]:
    """The reference loop's process CPU time, ms, over `runs` runs (sorted)."""
    times = []
    for _ in range(runs):
        started = time.process_time()
        reference_loop()
        times.append((time.process_time() - started) * 1000)
    return sorted(times)


def normalised(cpu_ms: float, loop: float) -> float:
    """CPU ms at the reference machine's speed: `cpu_ms × 41.5 / loop` (approximate: a server's mix
    of work does not scale with the machine exactly as the loop does)."""
    return cpu_ms * REFERENCE_LOOP_MS / loop if loop > 0 else float("nan")
