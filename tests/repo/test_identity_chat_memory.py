"""Users and keys, chat sessions and messages, check-ins and summaries."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from orrery.db.engine import Database
from orrery.errors import AuthenticationError, ConflictError, NotFoundError, ValidationError
from orrery.memory.messages import append_message
from orrery.repo import chat, identity, knowledge, memory
from tests.support.factories import make_entity, make_project, make_user

SECRET = "test-secret"


async def test_api_key_round_trip_and_revocation(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        key, plaintext = await identity.issue_api_key(s, user.id, "laptop", SECRET)
    assert plaintext.startswith(f"orr_{key.prefix}_") and key.key_hash not in plaintext
    async with db.transaction() as s:
        assert (await identity.authenticate(s, plaintext, SECRET)).id == user.id
        with pytest.raises(AuthenticationError, match="unknown"):
            await identity.authenticate(s, plaintext, "another-secret")
        with pytest.raises(AuthenticationError, match="malformed"):
            await identity.authenticate(s, "hello", SECRET)
        assert await identity.revoke_api_keys(s, user.id, "laptop") == 1
    async with db.sessions() as s:
        with pytest.raises(AuthenticationError, match="revoked"):
            await identity.authenticate(s, plaintext, SECRET)


async def test_duplicate_email_and_missing_profile(db: Database) -> None:
    async with db.transaction() as s:
        await identity.create_user(s, "Ada@Example.org", "Ada")
    with pytest.raises(ConflictError, match="already exists"):
        async with db.transaction() as s:
            await identity.create_user(s, "ada@example.org", "Ada again")
    async with db.sessions() as s:
        assert await identity.count_users(s) == 1
        with pytest.raises(NotFoundError, match="user profile"):
            await identity.get_profile(s, (await make_user(s)).id.__class__(int=0))


async def test_messages_are_numbered_in_order_with_attribution(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        task = await make_entity(s, user, project)
        c = await chat.create_session(s, user.id, project_id=project.id, focus_kind="task", focus_id=task.id)
        await append_message(s, user.id, c.id, chat.NewMessage("user", "Where do I start?"))
        reply = chat.NewMessage(
            "assistant",
            "With the outline.",
            agent_id="planner",
            tool_calls=[{"name": "get_linked_entities", "args": {}, "result": "ok"}],
            prompt_tokens=120,
            completion_tokens=8,
            latency_ms=40,
        )
        await append_message(s, user.id, c.id, reply)
        t = await chat.record_transition(s, user.id, c.id, "planner", "asked about order of work")
        assert t is not None and t.from_agent is None
        assert await chat.record_transition(s, user.id, c.id, "planner") is None
    async with db.sessions() as s:
        messages = await chat.list_messages(s, user.id, c.id)
        assert [(m.seq, m.role, m.agent_id) for m in messages] == [
            (1, "user", None),
            (2, "assistant", "planner"),
        ]
        assert messages[1].tool_calls == [{"name": "get_linked_entities", "args": {}, "result": "ok"}]
        assert [x.to_agent for x in await chat.list_transitions(s, user.id, c.id)] == ["planner"]
        assert (await chat.get_session(s, user.id, c.id)).active_agent == "planner"


async def test_concurrent_appends_never_share_a_seq(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        c = await chat.create_session(s, user.id)

    async def append(i: int) -> None:
        async with db.transaction() as s:
            await append_message(s, user.id, c.id, chat.NewMessage("user", f"m{i}"))

    await asyncio.gather(*(append(i) for i in range(8)))
    async with db.sessions() as s:
        seqs = [m.seq for m in await chat.list_messages(s, user.id, c.id)]
    assert seqs == list(range(1, 9))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"focus_kind": "task"}, "go together"),
        ({"focus_kind": "meeting", "focus_id": "x"}, "unknown focus kind"),
        ({"active_agent": "wizard"}, "unknown agent"),
    ],
)
async def test_session_validation(db: Database, kwargs: dict[str, Any], message: str) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        with pytest.raises(ValidationError, match=message):
            await chat.create_session(s, user.id, project_id=project.id, **kwargs)


async def test_focus_must_match_kind_and_project(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        task = await make_entity(s, user, project)
        with pytest.raises(NotFoundError):
            await chat.create_session(s, user.id, project_id=project.id, focus_kind="plan", focus_id=task.id)


async def test_check_ins_and_summary(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        task = await make_entity(s, user, project)
        await memory.add_check_in(s, user.id, note="good day", mood=4)
        with pytest.raises(ValidationError, match="between 1 and 5"):
            await memory.add_check_in(s, user.id, mood=7)
        with pytest.raises(ValidationError, match="not a goal"):
            await memory.add_check_in(s, user.id, goal_id=task.id)
        await memory.save_user_summary(
            s, user.id, patterns=["writes early"], wins=[], struggles=["context switching"]
        )
        await memory.save_user_summary(s, user.id, patterns=["writes early"], wins=["shipped"], struggles=[])
    async with db.sessions() as s:
        summary = await memory.get_user_summary(s, user.id)
        assert summary is not None and summary.wins == ["shipped"] and summary.struggles == []
        assert [c.mood for c in await memory.recent_check_ins(s, user.id)] == [4]


async def test_kb_entries_validate_codes_and_relations(db: Database) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        col = await knowledge.create_collection(s, user.id, project.id, "business-rules", "Business Rules")
        assert col.priority == 1
        a = await knowledge.create_entry(
            s,
            user.id,
            col.id,
            "BR-012",
            "Supplier field governance",
            data={"code_paths": ["src/suppliers.py"]},
        )
        b = await knowledge.create_entry(s, user.id, col.id, "BR-015", "Approved supplier list")
        await knowledge.relate_entries(s, user.id, a.id, "refines", b.id)
        with pytest.raises(ValidationError, match="look like 'BR-012'"):
            await knowledge.create_entry(s, user.id, col.id, "br 1", "x")
        with pytest.raises(ValidationError, match="code_paths"):
            await knowledge.create_entry(s, user.id, col.id, "BR-016", "x", data={"code_paths": "src"})
        with pytest.raises(ConflictError):
            await knowledge.create_entry(s, user.id, col.id, "BR-012", "again")
        with pytest.raises(ConflictError):
            await knowledge.relate_entries(s, user.id, a.id, "refines", b.id)
    async with db.sessions() as s:
        entry = await knowledge.get_entry_by_code(s, user.id, project.id, "BR-012")
        assert entry.data["code_paths"] == ["src/suppliers.py"]
