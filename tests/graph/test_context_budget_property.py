"""build_context never exceeds its budget, whatever the seeds: a property over many small budgets,
seed combinations, strategies and formats on the demo workspace (the seeds alone often do not fit)."""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import select

from orrery.config import Settings
from orrery.context.builder import STRATEGIES, build_context, resolve_request
from orrery.db.engine import Database
from orrery.db.models import Entity
from orrery.tokens import counter_for

COUNTER = counter_for("offline")
CASES = 80


async def test_tokens_used_never_exceed_the_budget(db: Database, settings: Settings, demo: Any) -> None:
    async with db.sessions() as s:
        ids = [str(i) for i in (await s.execute(select(Entity.id).order_by(Entity.name))).scalars()]
    rng = random.Random(12)
    over = []
    async with db.sessions() as s:
        for _ in range(CASES):
            seeds = rng.sample(ids, rng.choice((1, 1, 2, 3, 5)))
            budget = rng.choice((50, 51, 55, 60, 69, 80, 100, 143, 200, 320))
            request = resolve_request(
                seeds,
                budget=budget,
                strategy=rng.choice(sorted(STRATEGIES)),
                format=rng.choice(("structured", "narrative", "outline")),
                query=rng.choice((None, "pricing legal review", "launch")),
            )
            result = await build_context(s, demo.user_id, request, COUNTER)
            used = COUNTER.count(result["text"])
            assert result["metadata"]["tokens_used"] == used
            if used > budget:
                over.append((len(seeds), budget, used))
            assert result["text"], "something of the seeds is always shown"
    assert not over, f"over budget (seeds, budget, used): {over}"
