"""Workspace loading benchmark: synthetic workspaces on SQLite and a throwaway PostgreSQL.

Run `make bench` (or `python -m bench.run --sizes 1000,10000,100000`). Prints a markdown table:
seconds to generate and bulk-insert each workspace, rows per second, and the demo workspace load.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from backend.config import Settings
from backend.db.engine import Database
from backend.db.migrations import upgrade
from backend.demo.synth import synthesize
from backend.demo.workspace import load_demo
from tests.support.postgres import ThrowawayPostgres

EDGES_PER_ENTITY = 3


def _settings(url: str) -> Settings:
    return Settings(_env_file=None, database_url=url, secret_key="bench")  # type: ignore[call-arg]


async def _measure(url: str, size: int) -> tuple[float, int]:
    db = Database.from_settings(_settings(url))
    try:
        started = time.perf_counter()
        result = await synthesize(
            db, entities=size, edges_per_entity=EDGES_PER_ENTITY, kb_entries=max(10, size // 100), seed=1
        )
        seconds = time.perf_counter() - started
        return seconds, result.entities + result.edges + result.kb_entries + result.kb_relations
    finally:
        await db.dispose()


async def _demo(url: str) -> float:
    db = Database.from_settings(_settings(url))
    try:
        started = time.perf_counter()
        await load_demo(db, "bench")
        return time.perf_counter() - started
    finally:
        await db.dispose()


def _fresh_url(dialect: str, name: str, tmp: Path, pg: ThrowawayPostgres | None) -> str:
    if dialect == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp / (name + '.db')}"
    else:
        assert pg is not None
        asyncio.run(pg.execute(f"CREATE DATABASE {name}"))
        url = pg.url(name)
    upgrade(url)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated entity counts")
    parser.add_argument("--dialects", default="sqlite,postgresql")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    dialects = args.dialects.split(",")
    pg = ThrowawayPostgres().start() if "postgresql" in dialects else None
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for dialect in dialects:
                demo_seconds = asyncio.run(_demo(_fresh_url(dialect, "demo", Path(tmp), pg)))
                rows.append(f"| {dialect} | demo workspace | - | {demo_seconds:.2f} | - |")
                for size in sizes:
                    url = _fresh_url(dialect, f"synth_{size}", Path(tmp), pg)
                    seconds, total = asyncio.run(_measure(url, size))
                    rows.append(
                        f"| {dialect} | synth {size:,} entities x{EDGES_PER_ENTITY} edges | {total:,} | "
                        f"{seconds:.2f} | {total / seconds:,.0f} |"
                    )
                    print(rows[-1], flush=True)
    finally:
        if pg is not None:
            pg.stop()
    print("\n| engine | workload | rows | seconds | rows/s |\n|---|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
