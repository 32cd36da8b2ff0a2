"""Load benchmark over HTTP: N server workers on one database, many concurrent sessions, offline model.

Each run starts `orrery serve --workers N` on a fresh database, opens `--sessions` sessions that each
send `--turns` turns one after another (even sessions over SSE, odd ones as JSON), then sends a burst
of concurrent turns (and a duplicated Idempotency-Key) to `--burst` of the same sessions. Afterwards it
checks from the database that every session holds exactly its turns, `seq` contiguous, each reply
right after its message, nothing stored twice; and reports turns/s and p50/p95/p99 latency.

`--source DIR` serves another checkout (e.g. the code before a change) for before/after numbers.

Run `python -m bench.load_workers [--workers 2,4] [--sessions 100] [--turns 20] [--burst 20]
[--dialect postgresql|sqlite] [--source DIR]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from bench.common import bench_settings
from tests.support.load import (
    ROOT,
    LoadResult,
    prepare_database,
    run_load,
    server_process,
    verify_conversations,
)
from tests.support.postgres import ThrowawayPostgres

SECRET = "bench-secret"


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else 0.0
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def _row(
    dialect: str, workers: int, args: argparse.Namespace, result: LoadResult, problems: list[str]
) -> str:
    rate = result.turns / result.elapsed if result.elapsed else 0.0
    wrong = {p.split(":")[0] for p in problems}
    integrity = "intact" if not problems else f"{len(wrong)} sessions wrong"
    return (
        f"| {dialect} | {workers} | {args.sessions} x {args.turns} + burst {args.burst} | {result.turns} "
        f"| {result.retries} | {len(result.failures)} | {rate:.1f} | {_pct(result.latencies, 50):.0f} / "
        f"{_pct(result.latencies, 95):.0f} / {_pct(result.latencies, 99):.0f} | {integrity} |"
    )


def run_one(url: str, dialect: str, workers: int, args: argparse.Namespace) -> str:
    """One worker count on one fresh database: its table row."""
    source = Path(args.source).resolve() if args.source else ROOT
    demo = prepare_database(url, SECRET, source)
    with server_process(url, SECRET, workers=workers, source=source) as base:
        result = asyncio.run(
            run_load(
                [base],
                demo["api_key"],
                demo["project_id"],
                sessions=args.sessions,
                turns=args.turns,
                burst_sessions=args.burst,
            )
        )
    problems = asyncio.run(verify_conversations(bench_settings(url), result.expected))
    for failure in result.failures[:3]:
        print(f"  e.g. {failure}", flush=True)
    for problem in problems[:3]:
        print(f"  integrity: {problem[:300]}", flush=True)
    return _row(dialect, workers, args, result, problems)


def main(argv: list[str] | None = None) -> None:
    """Run each worker count and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="2,4", help="comma-separated worker counts")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--burst", type=int, default=20, help="sessions that get a same-session burst")
    parser.add_argument("--dialect", default="postgresql", choices=["postgresql", "sqlite"])
    parser.add_argument("--source", default=None, help="serve this checkout instead (before/after runs)")
    args = parser.parse_args(argv)
    rows = [
        "| engine | workers | sessions x turns | turns done | retried | failed | turns/s "
        "| p50 / p95 / p99 ms | integrity |",
        "|---|---:|---|---:|---:|---:|---:|---|---|",
    ]
    pg = ThrowawayPostgres().start() if args.dialect == "postgresql" else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i, workers in enumerate(int(w) for w in args.workers.split(",")):
                if pg is not None:
                    asyncio.run(pg.execute(f"CREATE DATABASE load_{i}"))
                    url = pg.url(f"load_{i}")
                else:
                    url = f"sqlite+aiosqlite:///{Path(tmp) / f'load_{i}.db'}"
                rows.append(run_one(url, args.dialect, workers, args))
                print(rows[-1], flush=True)
    finally:
        if pg is not None:
            pg.stop()
    print("\n".join(rows))


if __name__ == "__main__":
    main()
