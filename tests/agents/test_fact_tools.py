"""Remembered facts through the agent path: the offline model remembers, supersedes and forgets on
request; a fact keeps its chat and message; a "don't remember" chat refuses; the next chat's prompt
shows current facts (dated, with ids, quoted) within their budget and never the superseded ones."""

from __future__ import annotations

import uuid
from typing import Any

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from orrery.memory.recall.fit import HEADING as EARLIER_CHATS
from orrery.repo import chat, facts
from tests.support.factories import make_user
from tests.support.models import calls, streaming


async def _chat(db: Database, demo: Any, *, remember: bool = True) -> uuid.UUID:
    async with db.transaction() as s:
        record = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
        record.remember = remember
        return record.id


async def _say(orch: Orchestrator, demo: Any, sid: uuid.UUID, text: str) -> tuple[str, list[str]]:
    events = [e async for e in orch.turn(demo.user_id, sid, text)]
    assert events[-1].type == "done", events[-1].data
    return events[-1].data["reply"], [e.data["name"] for e in events if e.type == "tool_call"]


async def _prompt(db: Database, settings: Settings, demo: Any) -> Any:
    sid = await _chat(db, demo)
    async with db.transaction() as s:
        return await assemble_working_context(
            s, agent="coach", session_id=sid, user_id=demo.user_id, settings=settings, query="hello"
        )


async def test_offline_model_remembers_supersedes_and_forgets(
    db: Database, settings: Settings, demo: Any
) -> None:
    orch = Orchestrator(db, settings)
    first = await _chat(db, demo)
    await _say(orch, demo, first, "Hello there.")
    reply, tools = await _say(orch, demo, first, "Remember that my sister lives in Porto.")
    assert tools == ["remember_fact"] and "sister lives in Porto" in reply
    second = await _chat(db, demo)
    _, tools = await _say(orch, demo, second, "Remember that my sister moved to Lisbon.")
    assert tools == ["remember_fact"]
    async with db.sessions() as s:
        history = await facts.list_facts(s, demo.user_id, history=True)
    porto, lisbon = history
    assert (porto.source_session_id, porto.source_seq) == (first, 3)  # the user message of that turn
    assert porto.subject == "sister" and porto.superseded_by == lisbon.id and porto.superseded_at
    assert lisbon.source_session_id == second and lisbon.superseded_at is None
    wc = await _prompt(db, settings, demo)
    assert f'[fact {lisbon.id}] about "sister"' in wc.system_prompt
    assert '"My sister moved to Lisbon"' in wc.system_prompt and "Porto" not in wc.system_prompt
    section = next(r for r in wc.receipt.sections if r.name == "facts")
    assert [i.key for i in section.included] == [f"fact:{lisbon.id}"] and section.budget == 250
    _, tools = await _say(orch, demo, second, "Forget that my sister lives in Lisbon.")
    assert tools == ["forget_fact"]
    async with db.sessions() as s:
        assert await facts.list_facts(s, demo.user_id, history=True) == []  # the lineage went too
    after = await _prompt(db, settings, demo)
    profile = after.system_prompt.split(EARLIER_CHATS, 1)[0]  # recalled transcripts are apart
    assert "sister" not in profile and "[fact " not in profile
    assert not any(r.name == "facts" and r.included for r in after.receipt.sections)


async def test_a_dont_remember_chat_saves_no_fact(db: Database, settings: Settings, demo: Any) -> None:
    orch = Orchestrator(db, settings)
    sid = await _chat(db, demo, remember=False)
    reply, tools = await _say(orch, demo, sid, "Remember that my salary is 80,000 euros.")
    assert tools == ["remember_fact"] and "remember: false" in reply
    _, tools = await _say(orch, demo, sid, "Do you remember that talk about budgets?")
    assert "remember_fact" not in tools  # a question is not a request to remember
    async with db.sessions() as s:
        assert await facts.list_facts(s, demo.user_id, history=True) == []


async def test_tool_errors_are_readable_and_another_persons_fact_is_not_found(
    db: Database, settings: Settings, demo: Any
) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        theirs, _ = await facts.create_fact(s, eve.id, "Eve's secret")
    sid = await _chat(db, demo)
    for args, said in (
        ({"text": "x", "supersedes": str(theirs.id)}, "not found"),
        ({"text": "x", "valid_from": "last spring"}, "not a date"),
        ({"text": "  "}, "needs some text"),
    ):
        model = streaming(calls("remember_fact", args).function)
        reply, _ = await _say(Orchestrator(db, settings, lambda name, s, m=model: m), demo, sid, "note this")
        assert said in reply
    model = streaming(calls("forget_fact", {"fact_id": str(theirs.id)}).function)
    reply, _ = await _say(Orchestrator(db, settings, lambda name, s: model), demo, sid, "forget it")
    assert "not found" in reply
    async with db.sessions() as s:
        assert [f.text for f in await facts.list_facts(s, eve.id)] == ["Eve's secret"]
        assert await facts.list_facts(s, demo.user_id, history=True) == []


async def test_facts_have_their_own_budget_newest_first(db: Database, settings: Settings, demo: Any) -> None:
    async with db.transaction() as s:
        for i in range(30):
            await facts.create_fact(s, demo.user_id, f"Fact number {i} is about something long enough " * 2)
    wc = await _prompt(db, settings, demo)
    section = next(r for r in wc.receipt.sections if r.name == "facts")
    assert section.included and section.excluded and section.tokens <= section.budget
    assert all(i.reason == "over budget" for i in section.excluded)
    assert "Fact number 29" in wc.system_prompt and "Fact number 0 " not in wc.system_prompt
    async with db.sessions() as s:
        chat_row = await s.get(ChatSession, (await _chat(db, demo)))
        assert chat_row is not None and chat_row.remember


async def test_facts_cost_no_extra_round_trip(db: Database, settings: Settings, demo: Any) -> None:
    from tests.support.db_events import count_statements

    sid = await _chat(db, demo)
    counts = []
    for build in range(3):  # the first build also stores the chat's knowledge decision
        with count_statements(db) as statements:
            async with db.transaction() as s:
                await assemble_working_context(
                    s, agent="coach", session_id=sid, user_id=demo.user_id, settings=settings, query="hi"
                )
        counts.append(len(statements))
        async with db.transaction() as s:
            for i in range(25 if build == 1 else 0):
                await facts.create_fact(s, demo.user_id, f"Fact {i}", subject=f"topic {i % 5}")
    assert counts[1] == counts[2]  # none, then 25: the facts come with long-term memory's statement
