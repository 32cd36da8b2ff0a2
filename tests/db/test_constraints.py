"""The database itself refuses bad rows, even when a caller bypasses the repository layer."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from orrery.db.engine import Database
from orrery.db.models import (
    AgentTransition,
    ApiKey,
    ChatSession,
    CheckIn,
    Edge,
    Entity,
    KbCollection,
    KbEntry,
    KbRelation,
    Message,
    User,
)
from tests.support.factories import make_entity, make_project, make_user


async def _rejects(db: Database, make_row: Any) -> None:
    """Insert the row in its own transaction and expect the database to refuse it."""
    with pytest.raises(IntegrityError):
        async with db.transaction() as session:
            session.add(await make_row(session))
            await session.flush()


async def _world(db: Database) -> dict[str, Any]:
    async with db.transaction() as session:
        user = await make_user(session)
        project = await make_project(session, user)
        task = await make_entity(session, user, project, "task", "A")
        other = await make_entity(session, user, project, "task", "B")
        return {"user": user.id, "project": project.id, "task": task.id, "other": other.id}


def _entity(w: dict[str, Any], **kw: Any) -> Any:
    async def make(_s: Any) -> Entity:
        return Entity(**{"project_id": w["project"], "kind": "task", "name": "x", **kw})

    return make


async def test_user_email_unique_and_well_formed(db: Database) -> None:
    async with db.transaction() as session:
        session.add(User(email="a@example.org", display_name="A"))

    async def dup(_s: Any) -> User:
        return User(email="a@example.org", display_name="B")

    async def bad(_s: Any) -> User:
        return User(email="nope", display_name="B")

    await _rejects(db, dup)
    await _rejects(db, bad)


async def test_entity_checks(db: Database) -> None:
    w = await _world(db)
    await _rejects(db, _entity(w, kind="meeting"))
    await _rejects(db, _entity(w, name=""))
    await _rejects(db, _entity(w, goal_type="habit"))  # goal_type on a task
    await _rejects(db, _entity(w, kind="goal", goal_type="someday"))
    await _rejects(db, _entity(w, is_scratch=True))  # scratch task
    await _rejects(db, _entity(w, project_id=uuid.uuid4()))  # unknown project (FK)


async def test_one_context_document_per_project(db: Database) -> None:
    w = await _world(db)
    async with db.transaction() as session:
        session.add(Entity(project_id=w["project"], kind="document", name="Ctx", is_context_document=True))
    await _rejects(db, _entity(w, kind="document", name="Ctx 2", is_context_document=True))


async def test_edge_checks(db: Database) -> None:
    w = await _world(db)

    def edge(**kw: Any) -> Any:
        async def make(_s: Any) -> Edge:
            base = {
                "project_id": w["project"],
                "src_id": w["task"],
                "src_kind": "task",
                "rel": "depends_on",
                "dst_id": w["other"],
                "dst_kind": "task",
            }
            return Edge(**{**base, **kw})

        return make

    async with db.transaction() as session:
        session.add(await edge()(session))
    await _rejects(db, edge())  # unique (src, rel, dst)
    await _rejects(db, edge(rel="blocks"))
    await _rejects(db, edge(dst_id=w["task"]))  # self loop
    await _rejects(db, edge(dst_id=uuid.uuid4()))  # dangling end


async def test_deleting_entity_cascades_to_edges(db: Database) -> None:
    w = await _world(db)
    async with db.transaction() as session:
        session.add(
            Edge(
                project_id=w["project"],
                src_id=w["task"],
                src_kind="task",
                rel="depends_on",
                dst_id=w["other"],
                dst_kind="task",
            )
        )
    async with db.transaction() as session:
        await session.delete(await session.get(Entity, w["task"]))
    async with db.sessions() as session:
        assert (await session.execute(select(func.count()).select_from(Edge))).scalar_one() == 0


async def test_kb_checks(db: Database) -> None:
    w = await _world(db)
    async with db.transaction() as session:
        col = KbCollection(project_id=w["project"], slug="glossary", name="Glossary", priority=2)
        session.add(col)
        await session.flush()
        a = KbEntry(project_id=w["project"], collection_id=col.id, code="GT-1", name="Supplier")
        b = KbEntry(project_id=w["project"], collection_id=col.id, code="GT-2", name="Order")
        session.add_all([a, b])
        await session.flush()
        ids = {"col": col.id, "a": a.id, "b": b.id}

    async def dup_slug(_s: Any) -> KbCollection:
        return KbCollection(project_id=w["project"], slug="glossary", name="Again")

    async def dup_code(_s: Any) -> KbEntry:
        return KbEntry(project_id=w["project"], collection_id=ids["col"], code="GT-1", name="Dup")

    async def self_rel(_s: Any) -> KbRelation:
        return KbRelation(project_id=w["project"], src_entry_id=ids["a"], rel_type="x", dst_entry_id=ids["a"])

    await _rejects(db, dup_slug)
    await _rejects(db, dup_code)
    await _rejects(db, self_rel)


async def test_chat_checks(db: Database) -> None:
    w = await _world(db)
    async with db.transaction() as session:
        chat = ChatSession(user_id=w["user"], project_id=w["project"])
        session.add(chat)
        await session.flush()
        session.add(Message(session_id=chat.id, seq=1, role="user", content="hi"))
        sid = chat.id

    def message(**kw: Any) -> Any:
        async def make(_s: Any) -> Message:
            return Message(**{"session_id": sid, "seq": 2, "role": "user", "content": "x", **kw})

        return make

    async def half_focus(_s: Any) -> ChatSession:
        return ChatSession(user_id=w["user"], project_id=w["project"], focus_kind="task")

    async def no_switch(_s: Any) -> AgentTransition:
        return AgentTransition(session_id=sid, from_agent="coach", to_agent="coach")

    await _rejects(db, message(seq=1))  # duplicate seq
    await _rejects(db, message(role="robot"))
    await _rejects(db, message(seq=0))
    await _rejects(db, half_focus)
    await _rejects(db, no_switch)


async def test_check_in_mood_range_and_api_key_hash_unique(db: Database) -> None:
    w = await _world(db)

    async def mood(_s: Any) -> CheckIn:
        return CheckIn(user_id=w["user"], mood=9)

    async with db.transaction() as session:
        session.add(ApiKey(user_id=w["user"], name="k", prefix="abcd1234", key_hash="h" * 64))

    async def dup_key(_s: Any) -> ApiKey:
        return ApiKey(user_id=w["user"], name="k2", prefix="abcd1234", key_hash="h" * 64)

    await _rejects(db, mood)
    await _rejects(db, dup_key)


async def test_timestamps_round_trip_as_aware_utc(db: Database) -> None:
    w = await _world(db)
    due = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    async with db.transaction() as session:
        entity = await session.get(Entity, w["task"])
        assert entity is not None
        entity.due_at = due
    async with db.sessions() as session:
        entity = await session.get(Entity, w["task"])
        assert entity is not None and entity.due_at == due and entity.due_at.tzinfo is not None
