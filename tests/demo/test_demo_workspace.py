"""The demo workspace has the promised shape, and loading it twice duplicates nothing."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from orrery.db.engine import Database
from orrery.db.models import ApiKey, CheckIn, Edge, Entity, KbEntry, KbRelation, User
from orrery.demo.workspace import DEMO_NAMESPACE, FOCUS_KEYS, load_demo
from orrery.docs.index import get_context_summary
from orrery.repo import graph, identity, memory
from orrery.repo.summary import project_summary
from orrery.vocabulary import KB_COLLECTION_PRIORITY

SECRET = "test-secret"


async def _count(db: Database, model: type) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(model))).scalar_one())


async def test_demo_shape(db: Database) -> None:
    demo = await load_demo(db, SECRET)
    assert demo.created
    async with db.sessions() as s:
        summary = await project_summary(s, demo.user_id, demo.project_id)
        profile = await identity.get_profile(s, demo.user_id)
        user_summary = await memory.get_user_summary(s, demo.user_id)
        docs = await graph.list_entities(s, demo.user_id, demo.project_id, kind="document")
        focus_edges = await graph.edges_of(s, demo.user_id, demo.focus["task"])
        deps = (
            await s.execute(select(func.count()).select_from(Edge).where(Edge.rel == "depends_on"))
        ).scalar_one()
    e = summary.entities
    assert e["goal"] >= 3 and e["plan"] >= 2 and e["task"] >= 25 and e["milestone"] >= 2 and e["output"] >= 2
    assert deps >= 15
    assert sum(d.is_scratch for d in docs) == 1 and summary.context_document == "Atlas 2.0 launch brief"
    assert set(summary.kb_collections) == set(KB_COLLECTION_PRIORITY)
    assert all(n >= 1 for n in summary.kb_collections.values()) and summary.kb_relations >= 10
    assert profile.preferred_name == "Maya" and summary.check_ins >= 5
    assert user_summary is not None and user_summary.patterns and user_summary.wins and user_summary.struggles
    assert len(focus_edges) >= 15  # the focus task is richly linked, in both directions
    assert {e.rel for e in focus_edges} >= {"belongs_to_plan", "supports_goal", "depends_on", "references"}
    assert any(e.dst_id == demo.focus["task"] for e in focus_edges)
    async with db.sessions() as s:
        docs = await get_context_summary(s, demo.user_id, demo.project_id)
    assert docs["total_stories"] == 8 and docs["api_endpoint_count"] == 8


async def test_demo_load_is_idempotent_and_rotates_the_key(db: Database) -> None:
    first = await load_demo(db, SECRET)
    counts = [await _count(db, m) for m in (User, Entity, Edge, KbEntry, KbRelation, CheckIn)]
    second = await load_demo(db, SECRET)
    assert not second.created
    assert (second.user_id, second.project_id, second.focus) == (first.user_id, first.project_id, first.focus)
    assert [await _count(db, m) for m in (User, Entity, Edge, KbEntry, KbRelation, CheckIn)] == counts
    async with db.sessions() as s:
        assert (await identity.authenticate(s, second.api_key, SECRET)).id == second.user_id
        active = await s.execute(select(func.count()).select_from(ApiKey).where(ApiKey.revoked_at.is_(None)))
        assert active.scalar_one() == 1


async def test_demo_json_document(db: Database) -> None:
    data = (await load_demo(db, SECRET)).as_json()
    assert set(data) == {"user_id", "project_id", "api_key", "focus"}
    assert set(data["focus"]) == {"task", "plan", "goal", "document"}
    assert all(isinstance(v, str) for v in data["focus"].values())


async def test_demo_entity_ids_are_the_same_wherever_it_is_loaded(db: Database) -> None:
    """The demo's prompts quote entity ids: fixed ids make them read (and cost, in tokens) the same
    on every machine, so what fits a section's budget does not depend on random ids."""
    demo = await load_demo(db, "s")
    expected = {kind: uuid.uuid5(DEMO_NAMESPACE, key) for kind, key in FOCUS_KEYS.items()}
    assert demo.focus == expected
    async with db.sessions() as s:
        ids = (await s.execute(select(Entity.id).where(Entity.project_id == demo.project_id))).scalars().all()
    assert {i.version for i in ids} == {5}  # every entity, not only the focus ones
