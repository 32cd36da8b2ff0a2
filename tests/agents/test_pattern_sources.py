"""The pattern analyst reads only what recall may read — the person's own messages, never superseded
or failed ones, never a chat marked "don't remember" — in one query, and records the chats it read
in `UserSummary.source_sessions` (so forgetting one can rebuild the summary)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import update

from orrery.agents.patterns import refresh_user_summary
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import Message, UserSummary
from orrery.memory.messages import append_message
from orrery.repo import chat, identity, memory
from tests.support.db_events import count_statements
from tests.support.factories import make_project, make_user


async def _say(db: Database, user_id: Any, sid: Any, text: str, **kw: Any) -> Message:
    async with db.transaction() as s:
        return await append_message(s, user_id, sid, chat.NewMessage("user", text, **kw))


async def test_the_analyst_reads_only_what_recall_may_read_and_records_its_chats(db: Database) -> None:
    async with db.transaction() as s:
        ada, eve = await make_user(s, "Ada"), await make_user(s, "Eve")
        shared = await make_project(s, ada, "Shared")
        await identity.add_member(s, ada.id, shared.id, eve.id, "editor")
        kept = await chat.create_session(s, ada.id, project_id=shared.id)
        elsewhere = await chat.create_session(s, ada.id)  # no project: still the person's own
        private = await chat.create_session(s, ada.id, project_id=shared.id, remember=False)
        theirs = await chat.create_session(s, eve.id, project_id=shared.id)
        await memory.save_user_summary(
            s, ada.id, patterns=["Plans early"], wins=[], struggles=[], source_sessions=["earlier-chat"]
        )
    await _say(db, ada.id, kept.id, "kept: I plan on Mondays")
    edited = await _say(db, ada.id, kept.id, "superseded: the draft I replaced")
    async with db.transaction() as s:
        await s.execute(update(Message).where(Message.id == edited.id).values(superseded_at=utcnow()))
    await _say(db, ada.id, kept.id, "failed: the turn that never answered", status="failed")
    await _say(db, ada.id, elsewhere.id, "elsewhere: I run on Fridays")
    await _say(db, ada.id, private.id, "private: my salary is secret")
    await _say(db, eve.id, theirs.id, "eve: my own plans")

    seen: list[str] = []

    def analyst(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append("\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts))
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"patterns": ["Plans weekly"]})])

    with count_statements(db) as statements:
        await refresh_user_summary(db, FunctionModel(analyst), ada.id)
    [prompt] = seen
    assert "kept: I plan on Mondays" in prompt and "elsewhere: I run on Fridays" in prompt
    for unread in ("superseded:", "failed:", "private:", "eve:"):
        assert unread not in prompt, unread
    reads = [q for q in statements if "FROM messages" in q]
    assert len(reads) == 1, reads  # the messages and their chats in one query

    async with db.sessions() as s:
        summary = await s.get(UserSummary, ada.id)
    assert summary is not None and summary.patterns == ["Plans weekly", "Plans early"]
    assert set(summary.source_sessions) == {str(kept.id), str(elsewhere.id), "earlier-chat"}
    assert summary.source_sessions[-1] == "earlier-chat"  # what the kept items drew on stays listed


async def test_a_person_with_only_unremembered_chats_gives_the_analyst_nothing(db: Database) -> None:
    async with db.transaction() as s:
        ada = await make_user(s, "Ada")
        private = await chat.create_session(s, ada.id, remember=False)
    await _say(db, ada.id, private.id, "private: nothing to learn from")
    seen: list[str] = []

    def analyst(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append("\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts))
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {})])

    await refresh_user_summary(db, FunctionModel(analyst), ada.id)
    assert "private:" not in seen[0]
    async with db.sessions() as s:
        summary = await s.get(UserSummary, ada.id)
    assert summary is not None and summary.source_sessions == []
