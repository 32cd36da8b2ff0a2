"""The SQLite drivers side by side: CPU per statement through SQLAlchemy, `inline` (the default:
SQLite's calls on the event loop, `orrery.db.sqlite_inline`) against `aiosqlite` (a thread per
connection, each call handed back through the loop). A one-row read in a read session, and a write
transaction (`BEGIN IMMEDIATE`, one INSERT, COMMIT), on a WAL file like the server's.

`python -m bench.sqlite_driver [--runs 2000]`
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from orrery.config import Settings
from orrery.db.engine import Database


async def _cpu_us(driver: str, runs: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        db = Database.from_settings(
            Settings(_env_file=None, database_url=url, sqlite_driver=driver)  # type: ignore[call-arg]
        )
        try:
            async with db.transaction() as s:
                await s.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)"))
                await s.execute(text("INSERT INTO t (body) VALUES ('x')"))
            started = time.process_time()
            for _ in range(runs):
                async with db.sessions() as s:
                    (await s.execute(text("SELECT body FROM t WHERE id = 1"))).all()
            read = (time.process_time() - started) * 1e6 / runs
            started = time.process_time()
            for _ in range(runs // 4):
                async with db.transaction() as s:
                    await s.execute(text("INSERT INTO t (body) VALUES ('y')"))
            write = (time.process_time() - started) * 1e6 / (runs // 4)
        finally:
            await db.dispose()
    return read, write


def main(argv: list[str] | None = None) -> None:
    """Print CPU microseconds per read session and per write transaction for each driver."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args(argv)
    print("| SQLite driver | read session, 1 row: CPU µs | write transaction: CPU µs |\n|---|---:|---:|")
    for driver in ("inline", "aiosqlite"):
        read, write = asyncio.run(_cpu_us(driver, args.runs))
        print(f"| {driver} | {read:.0f} | {write:.0f} |")


if __name__ == "__main__":
    main()
