"""Read-your-writes benchmark: two `orrery serve` processes on one fresh database; each create of a
chat session on one process is read back at once on the other. Prints the misses (a 201 whose
session the other process cannot see yet): 0 when every route commits before answering.

`--fault` (PostgreSQL) drops every connection to the database every `--fault-every` seconds while
the clients run, then counts the acknowledged-but-lost writes: 201s whose session is not stored.
Clients see 503s then (counted as "other failures"), never a 201 for a write that was lost.

`--source DIR` serves another checkout (e.g. `git archive HEAD | tar -x -C DIR`) for before/after.

Run `python -m bench.read_your_writes [--count 400] [--concurrency 30] [--rounds 1]
[--dialect postgresql] [--fault [--fault-every 0.05]] [--source DIR]`.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from contextlib import ExitStack
from pathlib import Path

import asyncpg
from sqlalchemy import func, select

from bench.common import bench_settings, databases
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from tests.support.load import ROOT, prepare_database, server_process
from tests.support.read_your_writes import ReadAfterWrite, create_then_read

SECRET = "bench-secret"


async def _drop_connections(url: str, every: float, stop: asyncio.Event) -> int:
    """Terminate every backend of the database each `every` seconds until `stop`; how many."""
    name = url.rsplit("/", 1)[1]
    dsn = url.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)[0] + "/postgres"
    dropped = 0
    conn = await asyncpg.connect(dsn)
    try:
        while not stop.is_set():
            rows = await conn.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
            )
            dropped += len(rows)
            await asyncio.sleep(every)
    finally:
        await conn.close()
    return dropped


async def _stored(url: str, ids: list[str]) -> int:
    database = Database.from_settings(bench_settings(url))
    try:
        async with database.sessions() as s:
            wanted = [uuid.UUID(i) for i in ids]
            query = select(func.count()).select_from(ChatSession).where(ChatSession.id.in_(wanted))
            return int((await s.execute(query)).scalar_one())
    finally:
        await database.dispose()


async def _round(
    url: str, bases: list[str], demo: dict[str, str], args: argparse.Namespace
) -> tuple[ReadAfterWrite, int]:
    stop = asyncio.Event()
    faults = asyncio.create_task(_drop_connections(url, args.fault_every, stop)) if args.fault else None
    try:
        result = await create_then_read(
            bases, demo["api_key"], demo["project_id"], count=args.count, concurrency=args.concurrency
        )
    finally:
        stop.set()
        dropped = await faults if faults is not None else 0
    return result, dropped


def main(argv: list[str] | None = None) -> None:
    """Run the rounds and print one table row per round."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--dialect", default="postgresql", choices=["postgresql", "sqlite"])
    parser.add_argument("--fault", action="store_true", help="drop the database's connections under load")
    parser.add_argument("--fault-every", type=float, default=0.05)
    parser.add_argument("--source", default=None, help="serve the code in this folder")
    args = parser.parse_args(argv)
    if args.fault and args.dialect != "postgresql":
        parser.error("--fault needs --dialect postgresql")
    source = Path(args.source).resolve() if args.source else ROOT
    print(
        "| engine | processes | creates acknowledged | read misses | acknowledged but lost "
        "| connections dropped | other failures |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    with databases([args.dialect]) as fresh:
        for round_ in range(args.rounds):
            url = fresh(args.dialect, f"read_your_writes_{round_}", migrate=source == ROOT)
            demo = prepare_database(url, SECRET, source)
            with ExitStack() as stack:
                bases = [stack.enter_context(server_process(url, SECRET, source=source)) for _ in range(2)]
                result, dropped = asyncio.run(_round(url, bases, demo, args))
            lost = result.created - asyncio.run(_stored(url, result.created_ids))
            for failure in result.failures[:3]:
                print(f"  e.g. {failure}", flush=True)
            print(
                f"| {args.dialect} | 2 | {result.created} | {len(result.misses)} | {lost} | {dropped} "
                f"| {len(result.failures)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
