"""Recall from earlier chats at scale: what it adds to a turn for a person with 50,000 messages
across 500 chats (one project), on SQLite and PostgreSQL, one process.

The chats are written in bulk with the columns the normal path stores (token counts, search terms,
local embeddings: `index_columns`), dated a day apart. Then 50 distinct questions are each asked
as the first message of a new chat (their embedding computed first, as storing the message does),
and recall runs as a turn runs it (`gather`, then `fit` at the 2,000-token cap). Printed per
dialect: median CPU ms per turn with the process's copies warm (every turn after a person's first)
and cold (the first turn in a process), and the queries per turn. Numbers, not a timed test.

`--others 0,250000` runs once per count, each on a fresh database with that many other people's
messages on the same topics beside the person's (`bench.others`), side by side in one run; on
PostgreSQL the database's own CPU per warm turn (server and backends, from /proc) is printed beside
the process's: recall's cost must not grow with everyone else's data (issue 53).

Run `python -m bench.recall [--dialects sqlite,postgresql] [--chats 500] [--per-chat 100]
[--others 0,250000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.engine import make_url

from bench import procs
from bench.common import REFERENCE_LOOP_MS, bench_settings, databases, loop_ms, normalised
from bench.others import WORDS as TOPICS
from bench.others import add_others
from orrery.config import Settings
from orrery.context.earlier import request_for
from orrery.db.engine import Database
from orrery.db.models import ChatSession, Message
from orrery.memory.embeddings import load_embedder
from orrery.memory.history_cache import history_cache
from orrery.memory.message_index import index_columns
from orrery.memory.recall import fit, gather
from orrery.repo.chat import create_session
from orrery.repo.identity import create_project, create_user
from orrery.tokens import counter_for
from tests.support.db_events import count_statements

START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def _texts(chats: int, per_chat: int, seed: int = 7) -> list[list[str]]:
    """Each chat a run of short messages on two or three topics, as people's chats are."""
    rng = random.Random(seed)
    out = []
    for c in range(chats):
        words = rng.sample(TOPICS, 6)
        out.append(
            [
                f"Note {c}-{i}: the {rng.choice(words)} and the {rng.choice(words)} "
                f"need {rng.choice(words)} before {rng.choice(TOPICS)} on day {rng.randint(1, 28)}."
                for i in range(per_chat)
            ]
        )
    return out


async def _write(
    db: Database, texts: list[list[str]], columns: list[dict[str, Any]]
) -> tuple[uuid.UUID, Any]:
    """The person, their project and chats (bulk, as the message path stores them)."""
    async with db.transaction() as s:
        user = await create_user(s, f"recall-{uuid.uuid4().hex[:6]}@example.org", "Bench")
        project = await create_project(s, user.id, "Everything")
        at = 0
        for c, chat_texts in enumerate(texts):
            day = START + timedelta(days=c)
            sid = uuid.uuid4()
            await s.execute(
                insert(ChatSession).values(
                    id=sid,
                    user_id=user.id,
                    project_id=project.id,
                    title=f"chat {c}",
                    message_count=len(chat_texts),
                    created_at=day,
                    updated_at=day,
                )
            )
            rows = [
                {
                    "id": uuid.uuid4(),
                    "session_id": sid,
                    "seq": i + 1,
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": text,
                    "created_at": day + timedelta(minutes=i),
                    "status": "complete",
                    **columns[at + i],
                }
                for i, text in enumerate(chat_texts)
            ]
            at += len(chat_texts)
            await s.execute(insert(Message), rows)
        current = await create_session(s, user.id, project_id=project.id)
    return user.id, current


def _database_cpu(url: str) -> float:
    """The PostgreSQL server's CPU seconds so far (0 on SQLite, which runs in this process)."""
    return procs.postgres_cpu_seconds(make_url(url).port or 5432) if url.startswith("postgresql") else 0.0


async def _load_others(db: Database, others: int) -> None:
    """Other people's messages, then statistics for the planner (as a server that has run a while)."""
    async with db.engine.begin() as conn:
        await add_others(conn, others)
    async with db.engine.connect() as conn:
        await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("ANALYZE"))


async def _turns(
    settings: Settings, texts: list[list[str]], columns: list[dict[str, Any]], others: int = 0
) -> dict[str, float]:
    db = Database.from_settings(settings)
    counter = counter_for(settings.model)
    embedder = load_embedder()
    rng = random.Random(11)
    questions = [
        f"What did I say about the {a} and the {b}?" for a, b in (rng.sample(TOPICS, 2) for _ in range(50))
    ]
    try:
        user_id, current = await _write(db, texts, columns)
        await _load_others(db, others)
        out: dict[str, list[float]] = {"warm": [], "cold": [], "queries": [], "tokens": [], "db": []}
        for cold in (False, True):
            for question in questions:
                if embedder is not None:
                    embedder.embed_once([question])  # stored with the message before the turn runs
                if cold:
                    history_cache.clear()
                async with db.transaction() as s:
                    with count_statements(db) as statements:
                        cpu, db_cpu = time.process_time(), _database_cpu(settings.database_url)
                        pool = await gather(s, request_for(current, user_id, question), settings)
                        fitted = fit(pool, 2000, counter, question)
                        cpu = time.process_time() - cpu
                        db_cpu = _database_cpu(settings.database_url) - db_cpu
                out["cold" if cold else "warm"].append(cpu)
                if not cold:
                    out["db"].append(db_cpu)
                out["queries"].append(len(statements))
                out["tokens"].append(fitted.tokens)
        return {
            "warm_ms": statistics.median(out["warm"]) * 1000,
            "cold_ms": statistics.median(out["cold"]) * 1000,
            "db_ms": statistics.fmean(out["db"]) * 1000,
            "queries": max(out["queries"]),
            "tokens": statistics.fmean(out["tokens"]),
        }
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Print recall's cost per turn per dialect."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite,postgresql")
    parser.add_argument("--chats", type=int, default=500)
    parser.add_argument("--per-chat", type=int, default=100)
    parser.add_argument(
        "--others", default="0", help="other people's messages beside the person, comma-separated counts"
    )
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.others.split(",") if n.strip()]
    dialects = [d.strip() for d in args.dialects.split(",") if d.strip()]
    texts = _texts(args.chats, args.per_chat)
    columns = index_columns([t for chat in texts for t in chat])  # embedded once for both dialects
    with databases(dialects) as fresh:
        for dialect in dialects:
            for others in counts:
                settings = bench_settings(fresh(dialect, f"recall_scale_{others}"))
                r = asyncio.run(_turns(settings, texts, columns, others))
                loop = statistics.median(loop_ms())
                database = f", database {r['db_ms']:.1f} ms CPU per turn" if dialect == "postgresql" else ""
                print(
                    f"{dialect}: {args.chats * args.per_chat:,} messages across {args.chats} chats beside "
                    f"{others:,} other people's, cap 2,000: "
                    f"recall adds {r['warm_ms']:.1f} ms median CPU per turn{database} "
                    f"({normalised(r['warm_ms'], loop):.1f} at a {REFERENCE_LOOP_MS} ms loop; this one "
                    f"{loop:.1f} ms) ({r['cold_ms']:.1f} ms on a "
                    f"process's first turn for the person), at most {r['queries']:.0f} queries, "
                    f"{r['tokens']:.0f} tokens recalled on average",
                    flush=True,
                )


if __name__ == "__main__":
    main()
