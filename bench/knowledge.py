"""Knowledge benchmark: load_context_for_task on a 10k-entry / 50k-relation KB, both dialects, and
the token size of story-scoped doc context versus loading the whole docs.

Run `python -m bench.knowledge` (part of `make bench`). Target: < 20 ms median per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
import uuid
from typing import Any

from sqlalchemy import event, insert, select, text

from bench.common import bench_settings, databases, median_ms
from orrery.db.engine import Database
from orrery.db.models import KbEntry, KbRelation
from orrery.demo.synth import synthesize
from orrery.demo.workspace import DEMO_DOCS, load_demo
from orrery.docs.index import get_context_for_story
from orrery.knowledge.load_context import load_context_for_task
from orrery.tokens import counter_for

QUERIES = [
    "refund policy for overage on invoices",
    "supplier approval limit",
    "trial renewal discount rules",
    "quota allowance per region",
    "tax on purchase order credit",
    "ledger approval for refunds",
    "seat tier upgrade",
    "discount on renewal",
    "invoice credit refund",
    "workspace billing",
]


async def _relations(db: Database, project_id: uuid.UUID, target: int) -> int:
    """Top the synthetic KB up to `target` relations (random, deduplicated)."""
    rng = random.Random(3)
    async with db.transaction() as s:
        ids = (await s.execute(select(KbEntry.id).where(KbEntry.project_id == project_id))).scalars().all()
        have = set(
            (
                await s.execute(
                    select(KbRelation.src_entry_id, KbRelation.rel_type, KbRelation.dst_entry_id).where(
                        KbRelation.project_id == project_id
                    )
                )
            )
            .tuples()
            .all()
        )
        rows = []
        while len(have) < target:
            a, b = rng.sample(ids, 2)
            key = (a, rng.choice(["uses_term", "refines", "applies_to", "decided_by"]), b)
            if key in have:
                continue
            have.add(key)
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "project_id": project_id,
                    "src_entry_id": a,
                    "rel_type": key[1],
                    "dst_entry_id": b,
                }
            )
        for start in range(0, len(rows), 5000):
            await s.execute(insert(KbRelation), rows[start : start + 5000])
        if db.dialect == "postgresql":
            await s.execute(text("ANALYZE kb_relations, kb_entries"))
    return len(have)


async def _measure(url: str, runs: int) -> tuple[list[str], Any]:
    db = Database.from_settings(bench_settings(url))
    statements: list[str] = []
    try:
        synth = await synthesize(db, entities=1000, edges_per_entity=2, kb_entries=10_000, seed=1)
        relations = await _relations(db, synth.project_id, 50_000)
        event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append("x"))
        timings, trips, confidences = [], [], []
        for _ in range(runs):
            for query in QUERIES:
                statements.clear()
                started = time.perf_counter()
                async with db.sessions() as s:
                    result = await load_context_for_task(s, synth.user_id, synth.project_id, query)
                timings.append(time.perf_counter() - started)
                trips.append(len(statements))
                confidences.append(result.confidence)
        spread = {c: confidences.count(c) for c in ("high", "medium", "low", "none")}
        line = (
            f"load_context_for_task, 10,000 entries / {relations:,} relations | {median_ms(timings):.1f} | "
            f"{max(timings) * 1000:.1f} | {max(trips)} | {spread}"
        )
        demo = await load_demo(db, "bench")
        return [line], demo
    finally:
        await db.dispose()


async def _story_sizes(url: str, demo: Any) -> str:
    db = Database.from_settings(bench_settings(url))
    counter = counter_for("gpt-4o")
    try:
        whole = sum(counter.count(p.read_text()) for p in DEMO_DOCS.rglob("*") if p.is_file())
        sizes = []
        async with db.sessions() as s:
            for i in range(1, 9):
                ctx = await get_context_for_story(s, demo.user_id, demo.project_id, f"US-00{i}")
                sizes.append(counter.count(json.dumps(ctx)))
        mean = sum(sizes) / len(sizes)
        return (
            f"| story context (get_context_for_story) vs whole docs | {whole:,} tokens whole | "
            f"{mean:,.0f} tokens per story (min {min(sizes)}, max {max(sizes)}) | "
            f"{(1 - mean / whole) * 100:.0f}% less |"
        )
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Run the knowledge benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    dialects = args.dialects.split(",")
    rows, story = [], ""
    with databases(dialects) as fresh:
        for dialect in dialects:
            url = fresh(dialect, "kb_bench")
            lines, demo = asyncio.run(_measure(url, args.runs))
            rows += [f"| {dialect} | {line} |" for line in lines]
            print(rows[-1], flush=True)
            story = story or asyncio.run(_story_sizes(url, demo))
    print("\n| engine | workload | median ms | max ms | round trips | confidence spread |")
    print("|---|---|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"\n| measure | whole | story-scoped | reduction |\n|---|---|---|---|\n{story}")


if __name__ == "__main__":
    main()
