"""Working-context assembly benchmark: time and SQL round trips per strategy, both dialects.

A synthetic workspace (10,000 entities, ~30,000 edges) gets a focused chat session with 1,000
messages and a user with 100 check-ins, next to a 10-message session of the same user. For each
strategy we build the context `--runs` times and report the median time and the statements per
build. Round trips must be the same for 10 and 1,000 messages.

Run `python -m bench.context` (part of `make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import event, insert, update

from bench.common import bench_settings, databases, median_ms
from orrery.context.working_context import assemble_working_context
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import ChatSession, CheckIn, Message
from orrery.demo.synth import synthesize
from orrery.memory.message_index import index_columns
from orrery.repo import chat

STRATEGIES = ("last_n", "token_budget", "relevance", "summary")
BASE = "You are the planner. Answer in short bullet lists."
TOPICS = [
    "pricing page",
    "legal review",
    "release checklist",
    "beta feedback",
    "migration dry-run",
    "calculator widget",
    "launch email",
    "status page",
    "onboarding checklist",
    "metrics dashboard",
]


async def _session(db: Database, user_id: uuid.UUID, project_id: uuid.UUID, messages: int) -> uuid.UUID:
    async with db.transaction() as s:
        c = await chat.create_session(s, user_id, project_id=project_id)
        now = utcnow()
        rows = [
            {
                "id": uuid.uuid4(),
                "session_id": c.id,
                "seq": i + 1,
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"Turn {i}: progress on the {TOPICS[i % len(TOPICS)]}; next: review {i % 7}.",
                "created_at": now - timedelta(minutes=messages - i),
            }
            for i in range(messages)
        ]
        for row, stored in zip(rows, index_columns([str(r["content"]) for r in rows]), strict=True):
            row.update(stored)  # what append_message stores: counts, search terms, embedding
        await s.execute(insert(Message), rows)
        await s.execute(update(ChatSession).where(ChatSession.id == c.id).values(message_count=messages))
        return c.id


async def _prepare(db: Database) -> tuple[uuid.UUID, dict[int, uuid.UUID]]:
    synth = await synthesize(db, entities=10_000, edges_per_entity=3, kb_entries=100, seed=1)
    async with db.transaction() as s:
        now = utcnow()
        await s.execute(
            insert(CheckIn),
            [
                {
                    "id": uuid.uuid4(),
                    "user_id": synth.user_id,
                    "note": f"check-in {i}",
                    "mood": 1 + i % 5,
                    "created_at": now - timedelta(hours=6 * i),
                }
                for i in range(100)
            ],
        )
    sessions = {n: await _session(db, synth.user_id, synth.project_id, n) for n in (10, 1000)}
    return synth.user_id, sessions


async def _measure(url: str, runs: int) -> list[tuple[str, int, float, int, int]]:
    db = Database.from_settings(bench_settings(url))
    settings = bench_settings(url)
    statements: list[str] = []

    def count(*_: Any) -> None:
        statements.append("x")

    try:
        user_id, sessions = await _prepare(db)
        event.listen(db.engine.sync_engine, "before_cursor_execute", count)
        rows = []
        for strategy in STRATEGIES:
            for size, sid in sessions.items():
                timings, trips, tokens = [], [], 0
                for _ in range(runs + 1):  # the first build may write a summary; it is not timed
                    statements.clear()
                    started = time.perf_counter()
                    async with db.transaction() as s:
                        wc = await assemble_working_context(
                            s,
                            agent="planner",
                            base_prompt=BASE,
                            session_id=sid,
                            user_id=user_id,
                            settings=settings,
                            scoping=strategy,
                        )
                    timings.append(time.perf_counter() - started)
                    trips.append(len(statements))
                    tokens = wc.receipt.total_tokens
                rows.append((strategy, size, median_ms(timings[1:]), trips[-1], tokens))
        return rows
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Run the context benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    dialects = args.dialects.split(",")
    lines = []
    with databases(dialects) as fresh:
        for dialect in dialects:
            url = fresh(dialect, "context_bench")
            by_key = {
                (s, n): (ms, trips, tokens)
                for s, n, ms, trips, tokens in asyncio.run(_measure(url, args.runs))
            }
            for strategy in STRATEGIES:
                small, large = by_key[(strategy, 10)], by_key[(strategy, 1000)]
                lines.append(
                    f"| {dialect} | {strategy} | {small[0]:.1f} | {large[0]:.1f} | "
                    f"{large[0] / small[0]:.2f} | "
                    f"{small[1]} | {large[1]} | {large[2]:,} |"
                )
                print(lines[-1], flush=True)
    print(
        "\n| engine | strategy | ms (10 msgs) | ms (1,000 msgs) | ratio | round trips (10) "
        "| round trips (1,000) | tokens |\n|---|---|---:|---:|---:|---:|---:|---:|"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
