"""assemble_working_context (AC 4): prompt parts, scoped messages, receipt, strategy choice, round trips."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert

from orrery.config import Settings
from orrery.context.timeline import TITLE as TIMELINE_TITLE
from orrery.context.working_context import ContextSection, assemble_working_context
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import ChatSession, Message
from orrery.errors import NotFoundError, ValidationError
from orrery.memory.messages import append_message
from orrery.repo import chat, memory
from tests.support.db_events import count_statements
from tests.support.factories import make_entity, make_project, make_user

BASE = "You are the planner.\n\nAnswer in short bullet lists."


async def _demo_session(db: Database, demo: Any, **kw: Any) -> Any:
    async with db.transaction() as s:
        c = await chat.create_session(
            s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"], **kw
        )
        await append_message(s, demo.user_id, c.id, chat.NewMessage("user", "What blocks the pricing page?"))
    return c.id


async def test_assembles_base_prompt_injection_expertise_and_messages(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _demo_session(db, demo)
    async with db.transaction() as s:
        wc = await assemble_working_context(
            s, agent="planner", base_prompt=BASE, session_id=sid, user_id=demo.user_id, settings=settings
        )
    prompt = wc.system_prompt
    assert prompt.startswith(BASE)
    assert (
        prompt.index("## About the User")
        < prompt.index("## User's Active Goals")
        < prompt.index("## Expertise")
    )
    assert '"Launch Atlas 2.0 to general availability" (target)' in prompt
    assert "### Planning and dependency analysis" in prompt
    assert wc.messages == [{"role": "user", "content": "What blocks the pricing page?"}]
    assert wc.tools == []
    sections = wc.receipt.sections
    assert [(r.name, r.title) for r in sections] == [
        ("system", ""),
        ("profile", ""),
        ("expertise", ""),
        ("focus", "Current Focus"),
        ("knowledge", "Knowledge Context"),
        ("related", "Linked Entities"),
        ("timeline", TIMELINE_TITLE),
        ("conversation", ""),
        ("earlier_chats", "From earlier chats"),
    ]
    for r in sections:
        assert r.tokens <= r.budget
    budgets = {r.name: r.budget for r in sections}
    assert 500 < budgets["related"] <= 700 and budgets["knowledge"] == 600  # each its own (the guide apart)
    assert wc.receipt.strategy == "relevance" and wc.receipt.encoding == "cl100k_base"
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["status"] == "loaded"
    parts = sum(r.tokens for r in sections)
    assert abs(wc.receipt.total_tokens - parts) <= len(sections)  # BPE merges at the joints


async def test_budgets_drop_whole_items_and_say_why(db: Database, demo: Any) -> None:
    tight = Settings(
        _env_file=None,
        database_url="sqlite://",
        budget_profile=120,
        budget_expertise=200,  # type: ignore[call-arg]
        budget_conversation=20,
        budget_system=6,
    )
    sid = await _demo_session(db, demo)
    async with db.transaction() as s:
        for i in range(5):
            await append_message(s, demo.user_id, sid, chat.NewMessage("assistant", f"Reply number {i} " * 5))
        wc = await assemble_working_context(
            s, agent="coach", base_prompt=BASE, session_id=sid, user_id=demo.user_id, settings=tight
        )
    sections = {r.name: r for r in wc.receipt.sections}
    for r in sections.values():
        assert r.tokens <= r.budget, r
    assert sections["system"].excluded and "Answer in short" not in wc.system_prompt
    assert all(i.reason == "over budget" for i in sections["profile"].excluded)
    assert (
        "## User's Active Goals" in wc.system_prompt and "**Status:**" in wc.system_prompt
    )  # required lines
    assert sections["expertise"].excluded
    assert any(i.reason == "over the conversation budget" for i in sections["conversation"].excluded)


async def test_strategy_choice_explicit_then_session_then_agent_then_default(db: Database, demo: Any) -> None:
    s1 = await _demo_session(db, demo)
    async with db.transaction() as s:
        record = await s.get(ChatSession, s1)
        assert record is not None
        record.scoping_strategy = "token_budget"
    by_agent = Settings(_env_file=None, agent_strategies={"planner": "relevance"})  # type: ignore[call-arg]
    s2 = await _demo_session(db, demo)
    async with db.transaction() as s:

        def run(sid: Any, **kw: Any) -> Any:
            return assemble_working_context(
                s,
                agent="planner",
                base_prompt=BASE,
                session_id=sid,
                user_id=demo.user_id,
                **{"settings": by_agent, **kw},
            )

        assert (await run(s1, scoping="relevance")).receipt.strategy == "relevance"
        assert (await run(s1)).receipt.strategy == "token_budget"
        assert (await run(s2)).receipt.strategy == "relevance"
        plain = Settings(_env_file=None)  # type: ignore[call-arg]
        assert (await run(s2, settings=plain)).receipt.strategy == "relevance"
        with pytest.raises(ValidationError, match="unknown scoping strategy"):
            await run(s2, scoping="nope")
        with pytest.raises(ValidationError, match="unknown agent"):
            await assemble_working_context(
                s, agent="wizard", base_prompt="", session_id=s2, user_id=demo.user_id, settings=plain
            )


async def test_caller_sections_are_budgeted(db: Database, settings: Settings, demo: Any) -> None:
    """Sections on one budget share it: linked entities (about 620 tokens here) go first."""
    settings = settings.model_copy(update={"budget_related": 1000})
    sid = await _demo_session(db, demo)
    items = [(f"task:{i}", f"- Linked task number {i} with a few words") for i in range(200)]
    async with db.transaction() as s:
        wc = await assemble_working_context(
            s,
            agent="planner",
            base_prompt=BASE,
            session_id=sid,
            user_id=demo.user_id,
            settings=settings,
            sections=[ContextSection("related", "Related Notes", items)],
            auto_knowledge=False,
        )
    linked, caller = (r for r in wc.receipt.sections if r.name == "related")
    assert linked.title == "Linked Entities" and caller.title == "Related Notes"
    assert linked.tokens + caller.tokens <= 1000 and caller.budget == 1000 - linked.tokens
    assert caller.included and caller.excluded
    assert "## Related Notes\n- Linked task number 0" in wc.system_prompt


async def test_another_users_session_is_not_found(db: Database, settings: Settings, demo: Any) -> None:
    sid = await _demo_session(db, demo)
    async with db.transaction() as s:
        stranger = await make_user(s, "Eve")
    async with db.sessions() as s:
        with pytest.raises(NotFoundError):
            await assemble_working_context(
                s, agent="coach", base_prompt=BASE, session_id=sid, user_id=stranger.id, settings=settings
            )


async def _world(db: Database, messages: int, goals: int, check_ins: int) -> tuple[Any, Any]:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        for i in range(goals):
            await make_entity(s, user, project, "goal", f"Goal {i}", goal_type="target")
        for i in range(check_ins):
            await memory.add_check_in(s, user.id, note=f"n{i}", at=utcnow() - timedelta(hours=i))
        c = await chat.create_session(s, user.id, project_id=project.id)
        now = utcnow()
        rows = [
            {
                "session_id": c.id,
                "seq": i + 1,
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"message {i} about the release plan",
                "created_at": now,
            }
            for i in range(messages)
        ]
        if rows:
            await s.execute(insert(Message), rows)
        record = await s.get(ChatSession, c.id)
        assert record is not None
        record.message_count = messages
    return user.id, c.id


@pytest.mark.parametrize("strategy", ["last_n", "token_budget", "relevance", "summary"])
async def test_round_trips_do_not_grow_with_messages_goals_or_check_ins(
    db: Database, settings: Settings, strategy: str
) -> None:
    counts = []
    for messages, goals, check_ins in ((8, 1, 1), (400, 12, 60)):
        user_id, sid = await _world(db, messages, goals, check_ins)
        for _ in range(2):  # the second build reuses a stored summary
            with count_statements(db) as statements:
                async with db.transaction() as s:
                    await assemble_working_context(
                        s,
                        agent="coach",
                        base_prompt=BASE,
                        session_id=sid,
                        user_id=user_id,
                        settings=settings,
                        scoping=strategy,
                    )
            counts.append(len([q for q in statements if not q.startswith(("SAVEPOINT", "RELEASE"))]))
    assert max(counts) <= 9  # session 1 + memory 2 + query 1 + strategy reads 1-3 + summary write 2
    assert counts[1] == counts[3]  # steady state: identical for a small and a large session
