"""Operations benchmark: what the per-user limits add to a turn, and background-job throughput.

Limits cost one short transaction before a turn (an upsert) and one statement in the reply's
transaction; jobs cost a claim (one `UPDATE ... SKIP LOCKED`) and a finish per job. Both dialects.
Run `python -m bench.ops` (part of `make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench.common import bench_settings, databases, median_ms
from orrery.db.engine import Database
from orrery.ops.jobs import JobWorker, enqueue
from orrery.ops.limits import count_tokens, reserve_turn
from orrery.repo import identity

ROUNDS = 200
JOBS = 500


async def _limits(url: str) -> tuple[float, float]:
    settings = bench_settings(url).model_copy(
        update={"limit_turns_per_minute": 10**9, "limit_tokens_per_day": 10**12}
    )
    db = Database.from_settings(settings)
    try:
        async with db.transaction() as s:
            user = await identity.create_user(s, "bench@example.org", "Bench")
        reserve, tokens = [], []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await reserve_turn(db, settings, user.id)
            reserve.append(time.perf_counter() - started)
            async with db.transaction() as s:
                started = time.perf_counter()
                await count_tokens(s, settings, user.id, 1200)
                tokens.append(time.perf_counter() - started)
        return median_ms(reserve), median_ms(tokens)
    finally:
        await db.dispose()


async def _jobs(url: str, workers: int) -> float:
    settings = bench_settings(url)
    db = Database.from_settings(settings)

    async def noop(payload: dict[str, Any]) -> None:
        return None

    try:
        async with db.transaction() as s:
            for n in range(JOBS):
                await enqueue(s, "noop", {"n": n}, max_attempts=1)
        pool = [JobWorker(db, settings, {"noop": noop}) for _ in range(workers)]
        started = time.perf_counter()
        ran = await asyncio.gather(*(w.run_due() for w in pool))
        elapsed = time.perf_counter() - started
        assert sum(ran) == JOBS
        return JOBS / elapsed
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite,postgresql")
    dialects = parser.parse_args(argv).dialects.split(",")
    print(
        "| engine | limit check before a turn (ms) | token count in the reply's transaction (ms) |"
        " jobs/s, 1 worker | jobs/s, 4 workers |"
    )
    print("|---|---:|---:|---:|---:|")
    with databases(dialects) as fresh:
        for dialect in dialects:
            reserve, tokens = asyncio.run(_limits(fresh(dialect, "ops_limits")))
            one = asyncio.run(_jobs(fresh(dialect, "ops_jobs_1"), 1))
            four = asyncio.run(_jobs(fresh(dialect, "ops_jobs_4"), 4))
            print(f"| {dialect} | {reserve:.2f} | {tokens:.2f} | {one:.0f} | {four:.0f} |", flush=True)


if __name__ == "__main__":
    main()
