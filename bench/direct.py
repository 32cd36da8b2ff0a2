"""A turn's statement through SQLAlchemy against the same statement run on the driver (`Direct`,
`orrery.db.direct`): CPU per statement, on SQLite and PostgreSQL. The statement is the history
window's read (the session row joined to its messages), in a session without a transaction as a
turn runs it; once as the session's only statement (checkout and close included) and three times in
one session (what each further statement costs).

`python -m bench.direct [--runs 1000] [--dialect sqlite|postgresql|all]`
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.common import bench_settings, databases
from orrery.db.engine import Database
from orrery.db.models import ChatSession, User
from orrery.memory.history import _WINDOW_ROWS


async def _cpu_us(run: Callable[[], Awaitable[Any]], runs: int) -> float:
    for _ in range(runs // 10):  # warm: compiled, prepared, pooled
        await run()
    started = time.process_time()
    for _ in range(runs):
        await run()
    return (time.process_time() - started) * 1e6 / runs


async def _measure(url: str, runs: int) -> dict[str, float]:
    db = Database.from_settings(bench_settings(url))
    try:
        async with db.transaction() as s:
            user = User(email="bench@example.com", display_name="Bench")
            s.add(user)
            await s.flush()
            chat = ChatSession(user_id=user.id)
            s.add(chat)
            await s.flush()
        direct = _WINDOW_ROWS[db.dialect == "sqlite"]
        params = {"session_id": chat.id, "after_seq": 0, "latest_seq": 10}

        async def through_sqlalchemy(times: int) -> None:
            async with db.single() as s:
                connection = await s.connection()
                for _ in range(times):
                    (await connection.execute(direct.statement, params)).all()

        async def on_the_driver(times: int) -> None:
            async with db.single() as s:
                for _ in range(times):
                    await direct.rows(s, params)

        return {
            f"{name}, {times}x": await _cpu_us(lambda f=fn, t=times: f(t), runs)  # type: ignore[misc]
            for times in (1, 3)
            for name, fn in (("SQLAlchemy", through_sqlalchemy), ("Direct", on_the_driver))
        }
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Print CPU microseconds per session of 1 and of 3 statements, both ways, per dialect."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--dialect", default="all", choices=["sqlite", "postgresql", "all"])
    args = parser.parse_args(argv)
    dialects = ["sqlite", "postgresql"] if args.dialect == "all" else [args.dialect]
    print("| dialect | statements in the session | SQLAlchemy: CPU µs | Direct: CPU µs |")
    print("|---|---:|---:|---:|")
    with databases(dialects) as fresh:
        for dialect in dialects:
            cpu = asyncio.run(_measure(fresh(dialect, "bench_direct"), args.runs))
            for times in (1, 3):
                slow, fast = cpu[f"SQLAlchemy, {times}x"], cpu[f"Direct, {times}x"]
                print(f"| {dialect} | {times} | {slow:.0f} | {fast:.0f} |")


if __name__ == "__main__":
    main()
