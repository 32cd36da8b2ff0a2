"""`previous_response_id` pointing at an earlier response branches as OpenAI's does (issue 50 §3):
the model sees the chain ending at that response, not the abandoned branch, and the chat keeps that
one chain; an unknown id is named as the response the caller sent."""

from __future__ import annotations

import uuid
from typing import Any

import openai
import pytest
from sqlalchemy import select

from orrery.context.working_context import WorkingContext
from orrery.db.engine import Database
from orrery.db.models import Message
from tests.api.live import LiveServer


async def test_an_earlier_response_branches_the_chat(live: LiveServer, demo: Any, db: Database) -> None:
    seen: list[WorkingContext] = []
    live.app.state.orchestrator.on_context = seen.append
    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    first = await client.responses.create(model="orrery/planner", input="Plan my week of revision")
    second = await client.responses.create(
        model="orrery/planner", input="Add swimming on Monday", previous_response_id=first.id
    )
    streamed = await client.responses.create(
        model="orrery/planner", input="Add chess on Tuesday", previous_response_id=first.id, stream=True
    )
    branch = [e async for e in streamed][-1].response  # type: ignore[union-attr]
    contents = [m["content"] for m in seen[-1].messages]
    assert not any("swimming" in c for c in contents), contents
    assert any("revision" in c for c in contents) and len(seen[-1].messages) <= 3
    sid = uuid.UUID(hex=first.id.removeprefix("resp_")[:32])
    async with db.sessions() as s:
        stored = (
            await s.execute(select(Message).where(Message.session_id == sid).order_by(Message.seq))
        ).scalars()
        chain = [(m.role, m.content[:30]) for m in stored]
    assert [r for r, _ in chain] == ["user", "assistant", "user", "assistant"]
    assert "chess" in chain[2][1] and not any("swimming" in c for _, c in chain)
    after = await client.responses.create(
        model="orrery/planner", input="And Friday?", previous_response_id=branch.id
    )
    assert after.status == "completed" and second.id != branch.id


async def test_an_unknown_previous_response_is_named_as_sent(live: LiveServer, demo: Any) -> None:
    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    for unknown in (f"resp_{'0' * 48}", f"resp_{uuid.uuid4().hex}{uuid.uuid4().hex}", "resp_nonsense"):
        with pytest.raises(openai.NotFoundError) as caught:
            await client.responses.create(model="orrery", input="x", previous_response_id=unknown)
        assert caught.value.param == "previous_response_id" and unknown in caught.value.message
        assert "session" not in caught.value.message
