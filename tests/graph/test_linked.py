"""Linked entities: structure, limits, direction, scratch and context documents, formats, cache."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event

from orrery.db.engine import Database
from orrery.errors import NotFoundError, ValidationError
from orrery.graph.linked import load_linked_entities_context
from orrery.graph.linked_format import (
    HINT,
    abbreviated_within,
    format_abbreviated,
    format_full,
    guide_text,
)
from orrery.repo import graph
from orrery.tokens import counter_for
from tests.support.factories import make_entity, make_project, make_user


@pytest.fixture
async def w(db: Database) -> dict[str, Any]:
    """A task linked to a plan, a goal, five tasks (both directions), a milestone, documents, an output."""
    async with db.transaction() as s:
        u = await make_user(s)
        p = await make_project(s, u)
        e: dict[str, Any] = {"user": u.id, "project": p.id}

        async def add(key: str, kind: str, name: str, **kw: Any) -> None:
            e[key] = (await make_entity(s, u, p, kind, name, **kw)).id

        await add("task", "task", "Finalize pricing page", state="in_progress", description="Ship the page.")
        await add("plan", "plan", "Launch marketing")
        await add("goal", "goal", "Reach GA", goal_type="target")
        for i, state in enumerate(["done", "active", "todo", "in_progress", "blocked"]):
            await add(f"t{i}", "task", f"Dependency {i}", state=state)
        await add("ms", "milestone", "GA launch", due_at=datetime(2026, 12, 1, tzinfo=UTC))
        await add("doc", "document", "Pricing research", description="Eighteen interviews.")
        await add("ctx", "document", "Launch brief", is_context_document=True)
        await add("scratch", "document", "Scratch notes", is_scratch=True)
        await add("out", "output", "Pricing page v2")
        await add("lonely", "task", "Nothing linked")
        links = [
            ("task", "belongs_to_plan", "plan"),
            ("task", "supports_goal", "goal"),
            ("task", "depends_on", "t0"),
            ("task", "depends_on", "t1"),
            ("task", "depends_on", "t2"),
            ("t3", "depends_on", "task"),
            ("t4", "depends_on", "task"),
            ("task", "targets_milestone", "ms"),
            ("task", "references", "doc"),
            ("task", "references", "scratch"),
            ("task", "produces", "out"),
        ]
        for src, rel, dst in links:
            await graph.create_edge(s, u.id, e[src], rel, e[dst])
        return e


async def _load(db: Database, w: dict[str, Any], key: str = "task", kind: str = "task", **kw: Any) -> Any:
    async with db.sessions() as s:
        return await load_linked_entities_context(s, w["user"], w[key], kind, **kw)


async def test_structure_counts_and_direction(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=None, include_descriptions=True)
    assert ctx.counts == {"plans": 1, "goals": 1, "tasks": 5, "milestones": 1, "documents": 2, "outputs": 1}
    assert ctx.total == 11 and not ctx.truncated
    tasks = {i.name: i for i in ctx.linked["tasks"]}
    assert tasks["Dependency 0"].direction == "outgoing" and tasks["Dependency 3"].direction == "incoming"
    assert all(i.relation == "depends_on" and i.edge_id for i in tasks.values())
    assert ctx.linked["milestones"][0].due_at is not None and ctx.linked["plans"][0].due_at is None
    assert ctx.linked["documents"][0].description in ("Eighteen interviews.", None)


async def test_scratch_is_excluded_and_context_document_is_marked(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=None)
    docs = {d.name: d for d in ctx.linked["documents"]}
    assert "Scratch notes" not in docs
    brief = docs["Launch brief"]
    assert brief.is_context_document and brief.direction == "project" and brief.edge_id is None
    assert f"- Launch brief [{brief.id.hex}] active project context document" in format_abbreviated(ctx)


async def test_ordering_active_first_then_newest_and_max_per_type(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=3)
    names = [i.name for i in ctx.linked["tasks"]]
    assert set(names[:2]) == {"Dependency 1", "Dependency 3"}  # active / in_progress first
    assert names[2] == "Dependency 4"  # then newest
    assert ctx.counts["tasks"] == 5 and ctx.truncated


async def test_no_links(db: Database, w: dict[str, Any]) -> None:
    async with db.transaction() as s:
        u = await make_user(s, "Solo")
        p = await make_project(s, u)
        lonely = await make_entity(s, u, p, "goal", "Alone", goal_type="habit")
        ctx = await load_linked_entities_context(s, u.id, lonely.id, "goal")
    assert ctx.total == 0 and not ctx.truncated
    assert "No linked entities" in format_abbreviated(ctx) and "has no linked entities" in format_full(ctx)


async def test_abbreviated_golden(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=3)
    expected = f"""## Linked Entities

### Entity Relationships

How to use this task's links (→ it points there; ← points here):
- → depends_on: it waits for these; blockers while not done
- ← depends_on: these wait for it
- → belongs_to_plan, → supports_goal, → targets_milestone: what it is part of or works toward
- documents: references to consult, not work
- outputs: its deliverables

### Plans (1 linked)

- Launch marketing [{w["plan"].hex}] active → belongs_to_plan

### Goals (1 linked)

- Reach GA [{w["goal"].hex}] active → supports_goal

### Dependent Tasks (3 of 5 linked, 1 done)

- Dependency 3 [{w["t3"].hex}] in_progress ← depends_on; waits on 1 open
- Dependency 1 [{w["t1"].hex}] active → depends_on
- Dependency 4 [{w["t4"].hex}] blocked ← depends_on; waits on 1 open
- … and 2 more (use get_linked_entities)

### Milestones (1 linked, 0 done)

- GA launch [{w["ms"].hex}] active → targets_milestone

### Documents (2 linked)

- Launch brief [{w["ctx"].hex}] active project context document
- Pricing research [{w["doc"].hex}] active → references

### Outputs (1 linked)

- Pricing page v2 [{w["out"].hex}] active → produces

_Use the `get_linked_entities` tool for full details and descriptions._"""
    assert format_abbreviated(ctx) == expected


async def test_abbreviated_stays_within_the_related_budget(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=3)
    counter = counter_for("offline")
    for budget in (500, 300, 150, 60):
        fitted = abbreviated_within(ctx, budget, counter, total=budget)
        text = "\n\n".join(["## Linked Entities", *(t for _, t in fitted.blocks)])
        assert counter.count(text + "\n\n") <= budget and max(fitted.shown.values()) <= 3
        assert fitted.tokens == [counter.count(t) for _, t in fitted.blocks]
        if fitted.blocks:  # the hint is never dropped while the section is shown
            assert fitted.blocks[-1] == ("hint", HINT)
    assert not abbreviated_within(ctx, 20, counter, total=20).blocks  # not even the counts fit
    fitted = abbreviated_within(ctx, 10_000, counter)
    assert fitted.shown["tasks"] == 3 and fitted.shown["plans"] == 1  # nothing cut when it fits
    full = counter.count(format_abbreviated(ctx) + "\n\n")
    fitted = abbreviated_within(ctx, full - 20, counter, total=full - 20)
    assert fitted.shown["plans"] == 1 and fitted.shown["tasks"] == 2  # the longest list gives up first
    shared = next(
        b
        for b in range(full - 40, full + 40)
        if abbreviated_within(ctx, b, counter, total=b).shown["tasks"] == 3
    )
    guide = counter.count(guide_text(ctx)) + counter.count("\n\n")
    apart = abbreviated_within(ctx, shared - guide, counter)  # the guide counted apart: nothing cut
    assert apart.shown["tasks"] == 3 and apart.budget == shared
    assert abbreviated_within(ctx, shared - guide, counter, total=shared - guide).shown["tasks"] < 3


async def test_full_format_has_ids_in_headers_and_descriptions(db: Database, w: dict[str, Any]) -> None:
    text = format_full(await _load(db, w, max_per_type=None, include_descriptions=True))
    assert f"## Linked Entities for: Finalize pricing page [{w['task']}]" in text
    assert f"#### Pricing research [{w['doc']}]" in text and "- **Description:** Eighteen interviews." in text
    assert "- **Relationship:** depends_on (incoming)" in text and "- **Due:** 2026-12-01" in text


async def test_filter_kind_and_bad_input(db: Database, w: dict[str, Any]) -> None:
    ctx = await _load(db, w, max_per_type=None, filter_kind="plan")
    assert ctx.total == 1 and ctx.counts["plans"] == 1
    with pytest.raises(NotFoundError):
        await _load(db, w, kind="plan")  # wrong kind for the id
    with pytest.raises(ValidationError, match="unknown entity kind"):
        await _load(db, w, kind="meeting")
    async with db.sessions() as s:
        with pytest.raises(NotFoundError):
            await load_linked_entities_context(s, w["user"], "not-a-uuid", "task")
        stranger = await make_user(s, "Eve")
        with pytest.raises(NotFoundError):
            await load_linked_entities_context(s, stranger.id, w["task"], "task")


async def test_cache_serves_repeats_and_is_invalidated_by_edge_writes(
    db: Database, w: dict[str, Any]
) -> None:
    statements: list[str] = []
    event.listen(
        db.engine.sync_engine,
        "before_cursor_execute",
        lambda *a: None if a[2].startswith("BEGIN") else statements.append(a[2]),  # not SQLite's BEGIN
    )
    first = await _load(db, w)
    n = len(statements)
    again = await _load(db, w)
    assert again is first and len(statements) == n + 1  # only the access check ran
    async with db.transaction() as s:
        edge = await graph.create_edge(s, w["user"], w["lonely"], "relates_to", w["task"])
    assert (await _load(db, w)).total == first.total + 1
    async with db.transaction() as s:
        await graph.delete_edge(s, w["user"], edge.id)
    assert (await _load(db, w)).total == first.total
    async with db.transaction() as s:
        await graph.update_entity(s, w["user"], w["plan"], name="Renamed plan")
    assert (await _load(db, w)).linked["plans"][0].name == "Renamed plan"


def test_linked_cache_expires_is_bounded_and_checks_versions() -> None:
    import uuid

    from orrery.repo.linked_cache import LinkedCache

    now = [0.0]
    cache = LinkedCache(60, max_entities=2, clock=lambda: now[0])
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    cache.put(a, "v", 1, "value")
    cache.put(a, "w", 1, "other variant")
    assert cache.get(a, "v", 1) == "value" and cache.get(a, "v", 2) is None  # another version: a miss
    now[0] = 59.0
    assert cache.get(a, "w", 1) == "other variant"
    now[0] = 61.0
    assert cache.get(a, "v", 1) is None  # expired
    cache.put(a, "v", 1, "x")
    cache.put(b, "v", 1, "x")
    cache.put(c, "v", 1, "x")
    assert len(cache) == 2 and cache.get(a, "v", 1) is None  # bounded: the oldest entity went first
    cache.invalidate(b)
    assert cache.get(b, "v", 1) is None and cache.get(c, "v", 1) == "x"
    cache.put(c, "w", 2, "newer")
    assert cache.get(c, "v", 1) is None  # a newer version drops the older variants
    off = LinkedCache(0)
    off.put(a, "v", 1, "value")
    assert off.get(a, "v", 1) is None


async def test_a_circular_link_is_shown_in_both_directions(db: Database, w: dict[str, Any]) -> None:
    """Seed 001, open question 3: A -> B and B -> A are two edges, and both are shown."""
    async with db.transaction() as s:
        await graph.create_edge(s, w["user"], w["t0"], "depends_on", w["task"])
    ctx = await _load(db, w, max_per_type=None)
    both = [(i.relation, i.direction) for i in ctx.linked["tasks"] if i.name == "Dependency 0"]
    assert sorted(both) == [("depends_on", "incoming"), ("depends_on", "outgoing")]
    assert ctx.counts["tasks"] == 6
