"""Workspace loading benchmark: synthetic workspaces on SQLite and a throwaway PostgreSQL.

Run `python -m bench.load --sizes 1000,10000,100000` (part of `make bench`). Prints a markdown table:
seconds to generate and bulk-insert each workspace, rows per second, and the demo workspace load.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from bench.common import bench_settings, databases
from orrery.db.engine import Database
from orrery.demo.synth import synthesize
from orrery.demo.workspace import load_demo

EDGES_PER_ENTITY = 3


async def _measure(url: str, size: int) -> tuple[float, int]:
    db = Database.from_settings(bench_settings(url))
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
    db = Database.from_settings(bench_settings(url))
    try:
        started = time.perf_counter()
        await load_demo(db, "bench")
        return time.perf_counter() - started
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Run the load benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated entity counts")
    parser.add_argument("--dialects", default="sqlite,postgresql")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    dialects = args.dialects.split(",")
    rows = []
    with databases(dialects) as fresh:
        for dialect in dialects:
            demo_seconds = asyncio.run(_demo(fresh(dialect, "demo")))
            rows.append(f"| {dialect} | demo workspace | - | {demo_seconds:.2f} | - |")
            for size in sizes:
                url = fresh(dialect, f"synth_{size}")
                seconds, total = asyncio.run(_measure(url, size))
                rows.append(
                    f"| {dialect} | synth {size:,} entities x{EDGES_PER_ENTITY} edges | {total:,} | "
                    f"{seconds:.2f} | {total / seconds:,.0f} |"
                )
                print(rows[-1], flush=True)
    print("\n| engine | workload | rows | seconds | rows/s |\n|---|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
