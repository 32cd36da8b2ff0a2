"""Entities and edges through the repository: validation first, nothing half-written."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from orrery.db.engine import Database
from orrery.db.models import Edge, Entity
from orrery.errors import (
    ConflictError,
    CrossProjectEdgeError,
    NotFoundError,
    UnknownRelationError,
    ValidationError,
)
from orrery.repo import graph
from tests.support.factories import make_entity, make_project, make_user


async def _edge_count(db: Database) -> int:
    async with db.sessions() as session:
        return int((await session.execute(select(func.count()).select_from(Edge))).scalar_one())


@pytest.fixture
async def world(db: Database) -> dict[str, Any]:
    async with db.transaction() as session:
        user = await make_user(session)
        launch = await make_project(session, user, "Launch")
        other = await make_project(session, user, "Other")
        task = await make_entity(session, user, launch, "task", "Write docs")
        plan = await make_entity(session, user, launch, "plan", "Docs plan")
        foreign = await make_entity(session, user, other, "task", "Elsewhere")
        return {
            "user": user.id,
            "task": task.id,
            "plan": plan.id,
            "foreign": foreign.id,
            "project": launch.id,
        }


async def test_valid_edge_records_kinds_and_project(db: Database, world: dict[str, Any]) -> None:
    async with db.transaction() as session:
        edge = await graph.create_edge(
            session, world["user"], world["task"], "belongs_to_plan", world["plan"]
        )
    assert (edge.src_kind, edge.dst_kind, edge.project_id) == ("task", "plan", world["project"])
    async with db.sessions() as session:
        edges = await graph.edges_of(session, world["user"], world["plan"])
    assert [e.rel for e in edges] == ["belongs_to_plan"]


@pytest.mark.parametrize(
    ("rel", "dst_key", "error", "message"),
    [
        ("blocks", "plan", UnknownRelationError, "unknown relation 'blocks'"),
        ("relates_to", "foreign", CrossProjectEdgeError, "different projects"),
        ("relates_to", "missing", NotFoundError, "not found"),
        ("relates_to", "malformed", NotFoundError, "'not-a-uuid' not found"),
        ("relates_to", "task", ValidationError, "itself"),
    ],
)
async def test_invalid_edges_raise_clear_errors_and_write_nothing(
    db: Database, world: dict[str, Any], rel: str, dst_key: str, error: type[Exception], message: str
) -> None:
    dst = {**world, "missing": uuid.uuid4(), "malformed": "not-a-uuid"}[dst_key]
    with pytest.raises(error, match=message):
        async with db.transaction() as session:
            await graph.create_edge(session, world["user"], world["task"], rel, dst)
    assert await _edge_count(db) == 0


async def test_duplicate_edge_is_a_conflict_and_keeps_the_first(db: Database, world: dict[str, Any]) -> None:
    async with db.transaction() as session:
        await graph.create_edge(session, world["user"], world["task"], "belongs_to_plan", world["plan"])
    async with db.transaction() as session:
        with pytest.raises(ConflictError, match="already exists"):
            await graph.create_edge(session, world["user"], world["task"], "belongs_to_plan", world["plan"])
        # the transaction is still usable after the refused insert
        await graph.create_edge(session, world["user"], world["plan"], "has_task", world["task"])
    assert await _edge_count(db) == 2


async def test_entity_validation_messages(db: Database, world: dict[str, Any]) -> None:
    cases = [
        (graph.EntitySpec(kind="meeting", name="x"), "unknown entity kind 'meeting'"),
        (graph.EntitySpec(kind="task", name="  "), "must not be empty"),
        (graph.EntitySpec(kind="task", name="x", goal_type="habit"), "only for goals"),
        (graph.EntitySpec(kind="task", name="x", is_scratch=True), "only documents"),
        (graph.EntitySpec(kind="milestone", name="x", due_at=datetime(2026, 1, 1)), "timezone"),  # noqa: DTZ001,
    ]
    for spec, message in cases:
        with pytest.raises(ValidationError, match=message):
            async with db.transaction() as session:
                await graph.create_entity(session, world["user"], world["project"], spec)
    async with db.sessions() as session:
        assert (await session.execute(select(func.count()).select_from(Entity))).scalar_one() == 3


async def test_update_and_delete_entity(db: Database, world: dict[str, Any]) -> None:
    async with db.transaction() as session:
        await graph.create_edge(session, world["user"], world["task"], "belongs_to_plan", world["plan"])
        updated = await graph.update_entity(session, world["user"], world["task"], state="done")
        assert updated.state == "done"
        with pytest.raises(ValidationError, match="cannot change kind"):
            await graph.update_entity(session, world["user"], world["task"], kind="plan")
    async with db.transaction() as session:
        await graph.delete_entity(session, world["user"], world["plan"])
    assert await _edge_count(db) == 0


async def test_list_and_count(db: Database, world: dict[str, Any]) -> None:
    async with db.sessions() as session:
        tasks = await graph.list_entities(session, world["user"], world["project"], kind="task")
        counts = await graph.count_by_kind(session, world["user"], world["project"])
    assert [t.name for t in tasks] == ["Write docs"]
    assert counts["task"] == 1 and counts["plan"] == 1 and counts["goal"] == 0


async def test_context_document_is_unique_per_project(db: Database, world: dict[str, Any]) -> None:
    spec = graph.EntitySpec(kind="document", name="Context", is_context_document=True)
    async with db.transaction() as session:
        await graph.create_entity(session, world["user"], world["project"], spec)
    with pytest.raises(ConflictError, match="context document"):
        async with db.transaction() as session:
            await graph.create_entity(session, world["user"], world["project"], spec)
