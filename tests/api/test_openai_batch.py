"""Identical prompts sent at once (LangChain's `batch([q, q, q])`) meet the resend rule: they are one
conversation, so the three requests share one turn. Distinct `user` values or an `Idempotency-Key`
per call get three answers, as docs/doors/openai.md says. The real `openai` SDK, a live server."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

import openai
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from sqlalchemy import select

from orrery.db.engine import Database
from orrery.db.models import Message
from tests.api.live import LiveServer

QUESTION: Any = [{"role": "user", "content": "Name one risk in the billing plan."}]


class HeldModel:
    """A model whose answers wait until `release` is set, so a batch's requests all arrive while the
    first turn runs (as they do against a real model, which takes seconds)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.called = threading.Event()

    async def _wait(self) -> None:
        self.called.set()
        async with asyncio.timeout(60):  # a bound, not a timing assertion
            while not self.release.is_set():  # noqa: ASYNC110 - set from the test's thread
                await asyncio.sleep(0.01)

    async def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await self._wait()
        return ModelResponse(parts=[TextPart("Scope creep.")])

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        await self._wait()
        yield "Scope creep."

    def model(self) -> FunctionModel:
        return FunctionModel(self.answer, stream_function=self.stream)


async def _waiting_for_the_lock(live: LiveServer, count: int) -> None:
    """Until `count` requests wait for one session's turn lock (they have looked for an earlier
    request of theirs already, so what they share is settled)."""
    locks = live.app.state.orchestrator.locks._local
    async with asyncio.timeout(60):
        while not any(len(lock._waiters or ()) >= count for lock in list(locks.values())):  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def _batch(
    live: LiveServer, client: openai.AsyncOpenAI, held: HeldModel, calls: list[dict[str, Any]]
) -> list[tuple[str, str]]:
    """(session, completion id) of each call, sent together: the later ones while the first one's
    turn runs; the model answers once they all wait for the session (or at once, for calls that
    are different conversations)."""

    async def one(extra: dict[str, Any]) -> tuple[str, str]:
        raw = await client.chat.completions.with_raw_response.create(
            model="orrery/planner", messages=QUESTION, **extra
        )
        return raw.headers["x-orrery-session"], raw.parse().id

    held.release.clear()
    held.called.clear()
    if len({str(c.get("user")) for c in calls}) > 1:
        held.release.set()
        return list(await asyncio.gather(*(one(extra) for extra in calls)))
    first = asyncio.ensure_future(one(calls[0]))
    async with asyncio.timeout(60):
        while not held.called.is_set():  # noqa: ASYNC110 - set by the server's thread
            await asyncio.sleep(0.01)
    rest = asyncio.gather(*(one(extra) for extra in calls[1:]))
    await _waiting_for_the_lock(live, len(calls) - 1)
    held.release.set()
    return [await first, *await rest]


async def _replies(db: Database, session: str) -> int:
    async with db.sessions() as s:
        query = select(Message).where(Message.session_id == uuid.UUID(session), Message.role == "assistant")
        return len((await s.execute(query)).scalars().all())


async def test_a_batch_of_one_prompt_is_one_turn_unless_the_calls_differ(
    live: LiveServer, demo: Any, db: Database
) -> None:
    held = HeldModel()
    live.app.state.orchestrator.model_factory = lambda _name, _settings: held.model()
    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    same = await _batch(live, client, held, [{"user": "batch"}] * 3)
    assert len({sid for sid, _ in same}) == 1 and await _replies(db, same[0][0]) == 1  # one turn, thrice

    users = await _batch(live, client, held, [{"user": f"batch-{i}"} for i in range(3)])
    assert len({sid for sid, _ in users}) == 3  # a conversation each
    assert [await _replies(db, sid) for sid, _ in users] == [1, 1, 1]

    keys = [{"user": "keyed", "extra_headers": {"Idempotency-Key": str(uuid.uuid4())}} for _ in range(3)]
    keyed = await _batch(live, client, held, keys)
    assert len({sid for sid, _ in keyed}) == 1 and await _replies(db, keyed[0][0]) == 3  # three turns
    await client.close()
