"""The linked-entity cache is coherent across processes: a graph write committed by another process
(its own engine and its own cache) is seen here on the very next read, long before the TTL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import event

from orrery.db.engine import Database
from orrery.graph.linked import load_linked_entities_context
from orrery.repo import graph
from tests.support.entrypoint import server_launcher
from tests.support.factories import make_entity, make_project, make_user

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import asyncio, sys, uuid
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import graph

async def main(url, user, task, other, neighbour):
    user = uuid.UUID(user)
    db = Database.from_settings(Settings(_env_file=None, database_url=url, secret_key="x"))
    async with db.transaction() as s:
        await graph.create_edge(s, user, other, "depends_on", task)
        await graph.update_entity(s, user, neighbour, name="Renamed elsewhere")
    await db.dispose()

asyncio.run(main(*sys.argv[1:]))
"""


async def _linked(db: Database, user: Any, task: Any) -> Any:
    async with db.sessions() as s:
        return await load_linked_entities_context(s, user, task, "task", max_per_type=3)


async def test_a_write_in_another_process_is_seen_at_once(db: Database, settings: Any) -> None:
    async with db.transaction() as s:
        u = await make_user(s)
        p = await make_project(s, u)
        task = await make_entity(s, u, p, "task", "Finalize pricing page")
        plan = await make_entity(s, u, p, "plan", "Launch plan")
        other = await make_entity(s, u, p, "task", "Write launch email")
        await graph.create_edge(s, u.id, task.id, "belongs_to_plan", plan.id)
    statements: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    before = await _linked(db, u.id, task.id)
    cached = await _linked(db, u.id, task.id)
    assert cached is before and before.total == 1  # served from this process's cache

    args = [str(v) for v in (settings.database_url, u.id, task.id, other.id, plan.id)]
    # the writer is a process of its own, forked from the test process's launcher (`python -c WRITER`)
    code, _, stderr = await asyncio.to_thread(server_launcher().run_split, args, code=WRITER, cwd=ROOT)
    assert code == 0, stderr

    after = await _linked(db, u.id, task.id)  # the TTL (60 s) has not passed: only the stamp tells
    assert after.total == 2 and after.counts["tasks"] == 1
    assert after.linked["tasks"][0].direction == "incoming"
    assert after.linked["plans"][0].name == "Renamed elsewhere"
