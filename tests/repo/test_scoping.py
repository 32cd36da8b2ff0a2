"""User B never sees user A's data: every read and write answers "not found"."""

from __future__ import annotations

from typing import Any

import pytest

from orrery.db.engine import Database
from orrery.errors import NotFoundError, ValidationError
from orrery.memory.messages import append_message
from orrery.repo import chat, graph, identity, knowledge, memory
from tests.support.factories import make_entity, make_project, make_user


@pytest.fixture
async def two_users(db: Database) -> dict[str, Any]:
    async with db.transaction() as session:
        alice, bob = await make_user(session, "Alice"), await make_user(session, "Bob")
        project = await make_project(session, alice)
        task = await make_entity(session, alice, project, "task", "Secret task")
        goal = await make_entity(session, alice, project, "goal", "Secret goal", goal_type="target")
        edge = await graph.create_edge(session, alice.id, task.id, "supports_goal", goal.id)
        col = await knowledge.create_collection(session, alice.id, project.id, "glossary", "Glossary")
        await knowledge.create_entry(session, alice.id, col.id, "GT-1", "Term")
        session_ = await chat.create_session(session, alice.id, project_id=project.id)
        return {
            "alice": alice.id,
            "bob": bob.id,
            "project": project.id,
            "task": task.id,
            "goal": goal.id,
            "edge": edge.id,
            "collection": col.id,
            "chat": session_.id,
        }


async def test_bob_cannot_read_alices_project(db: Database, two_users: dict[str, Any]) -> None:
    bob, w = two_users["bob"], two_users
    async with db.sessions() as s:
        assert await identity.list_projects(s, bob) == []
        reads = [
            graph.list_entities(s, bob, w["project"]),
            graph.get_entity(s, bob, w["task"]),
            graph.edges_of(s, bob, w["task"]),
            graph.count_by_kind(s, bob, w["project"]),
            knowledge.get_entry_by_code(s, bob, w["project"], "GT-1"),
            knowledge.list_collections(s, bob, w["project"]),
            chat.get_session(s, bob, w["chat"]),
            chat.list_messages(s, bob, w["chat"]),
        ]
        for read in reads:
            with pytest.raises(NotFoundError):
                await read
        assert await graph.get_entities(s, bob, [w["task"], w["goal"]]) == {}


async def test_bob_cannot_write_into_alices_project(db: Database, two_users: dict[str, Any]) -> None:
    bob, w = two_users["bob"], two_users
    async with db.sessions() as s:
        writes = [
            graph.create_entity(s, bob, w["project"], graph.EntitySpec(kind="task", name="x")),
            graph.create_edge(s, bob, w["task"], "relates_to", w["goal"]),
            graph.delete_edge(s, bob, w["edge"]),
            graph.update_entity(s, bob, w["task"], state="done"),
            knowledge.create_entry(s, bob, w["collection"], "GT-2", "x"),
            append_message(s, bob, w["chat"], chat.NewMessage(role="user", content="hi")),
            chat.create_session(s, bob, project_id=w["project"]),
            memory.add_check_in(s, bob, project_id=w["project"]),
        ]
        for write in writes:
            with pytest.raises(NotFoundError):
                await write


async def test_viewer_can_read_but_not_write(db: Database, two_users: dict[str, Any]) -> None:
    w = two_users
    async with db.transaction() as s:
        await identity.add_member(s, w["alice"], w["project"], w["bob"], "viewer")
    async with db.sessions() as s:
        assert [p.id for p in await identity.list_projects(s, w["bob"])] == [w["project"]]
        assert (await graph.get_entity(s, w["bob"], w["task"])).name == "Secret task"
        with pytest.raises(ValidationError, match="read-only"):
            await graph.create_entity(s, w["bob"], w["project"], graph.EntitySpec(kind="task", name="x"))
