"""A turn's database cost against the length of its chat: the same turns (store the question, build
the context with `relevance`, recall) in a 10-message chat and in a long one, on a throwaway
PostgreSQL, with the database's CPU per turn (server and backends, from /proc) beside the process's.
Issue 53's target: a 6,000-message chat within 1.5x of a 10-message one.

The chats are written in bulk with their search terms (no embeddings: the statements are what is
measured), beside `--others` other people's messages. Run
`python -m bench.session_length [--lengths 10,6000] [--turns 20] [--others 0]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from sqlalchemy import text
from sqlalchemy.engine import make_url

from bench import procs
from bench.chats import TOPICS, write_chat
from bench.common import bench_settings, databases
from bench.others import add_others
from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.memory.history_cache import history_cache
from orrery.memory.messages import append_message
from orrery.repo import chat
from orrery.repo.identity import create_user


async def _chat(db: Database, n: int) -> tuple[uuid.UUID, uuid.UUID]:
    async with db.transaction() as s:
        user = await create_user(s, f"long-{uuid.uuid4().hex[:6]}@example.org", "Long")
        c = await chat.create_session(s, user.id)
        contents = [
            f"About the {TOPICS[i % 10]} and the {TOPICS[(i * 3 + 1) % 10]}: item {i}." for i in range(n)
        ]
        await write_chat(s, c.id, contents)
    return user.id, c.id


async def _measure(settings: Settings, length: int, turns: int, others: int) -> tuple[float, float]:
    db = Database.from_settings(settings)
    port = make_url(settings.database_url).port or 5432
    try:
        async with db.engine.begin() as conn:
            await add_others(conn, others)
        user_id, sid = await _chat(db, length)
        async with db.engine.connect() as conn:
            await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("ANALYZE"))
        own: list[float] = []
        database: list[float] = []
        for turn in range(turns + 2):  # two unmeasured: the process's first read of the chat
            cpu, db_cpu = time.process_time(), procs.postgres_cpu_seconds(port)
            async with db.transaction() as s:
                question = f"What did I say about the garden and the ferry, turn {turn}?"
                await append_message(s, user_id, sid, chat.NewMessage("user", question))
            async with db.transaction() as s:
                await assemble_working_context(
                    s, agent="coach", session_id=sid, user_id=user_id, settings=settings, scoping="relevance"
                )
            async with db.transaction() as s:
                await append_message(s, user_id, sid, chat.NewMessage("assistant", "Noted."))
            if turn >= 2:
                own.append(time.process_time() - cpu)
                database.append(procs.postgres_cpu_seconds(port) - db_cpu)
        return statistics.median(own) * 1000, statistics.fmean(database) * 1000
    finally:
        history_cache.clear()
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", default="10,6000")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--others", type=int, default=0)
    args = parser.parse_args(argv)
    with databases(["postgresql"]) as fresh:
        for length in (int(n) for n in args.lengths.split(",")):
            settings = bench_settings(fresh("postgresql", f"length_{length}"))
            own, database = asyncio.run(_measure(settings, length, args.turns, args.others))
            print(
                f"postgresql: a {length:,}-message chat beside {args.others:,} other people's messages: "
                f"{own:.1f} ms CPU per turn in the process, database {database:.1f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
