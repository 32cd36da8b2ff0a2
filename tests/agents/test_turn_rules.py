"""The turn rules: a failed turn's message is marked and shown to the model as unanswered (never two
bare user messages in a row); one Idempotency-Key means one request; refusals store nothing; each model
attempt has its own timeout and fallbacks run after a hang; a turn finishes when its client leaves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from orrery.agents.attempts import with_fallbacks
from orrery.agents.orchestrator import UNANSWERED, Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.errors import ConflictError, NotFoundError, ValidationError
from orrery.repo import chat, graph
from tests.support.models import streaming


async def _session(db: Database, demo: Any, **focus: Any) -> Any:
    """A new chat session in the demo workspace (`demo`: a copy of the demo-loaded template)."""
    async with db.transaction() as s:
        record = await chat.create_session(s, demo.user_id, project_id=demo.project_id, **focus)
    return record.id


async def _run(orch: Orchestrator, demo: Any, sid: Any, message: str | None, **kw: Any) -> list[Any]:
    return [e async for e in orch.turn(demo.user_id, sid, message, **kw)]


async def _stored(db: Database, demo: Any, sid: Any) -> list[tuple[str, str, str]]:
    async with db.sessions() as s:
        return [(m.role, m.content, m.status) for m in await chat.list_messages(s, demo.user_id, sid)]


class Flaky:
    """Fails while `failing` is set (with internals in the exception), else answers; records prompts."""

    def __init__(self) -> None:
        self.failing = True
        self.seen: list[list[ModelMessage]] = []
        self.model = streaming(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        if self.failing:
            raise RuntimeError("upstream 10.0.0.7:5432 exploded: QueuePool limit of size 5")
        return ModelResponse(parts=[TextPart("Answered.")])


async def test_a_failed_message_is_shown_to_the_model_as_unanswered(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _session(db, demo)
    flaky = Flaky()
    orch = Orchestrator(db, settings, lambda _n, _s: flaky.model)
    failed = await _run(orch, demo, sid, "First question", client_key="k1")
    assert failed[-1].type == "error" and failed[-1].data["code"] == "model_error"
    assert failed[-1].data["message"] == "the model failed; retry shortly"  # no internals
    flaky.failing = False
    done = await _run(orch, demo, sid, "Second question")
    assert done[-1].type == "done"
    history = flaky.seen[-1]
    texts = [
        ("user", p.content) if isinstance(p, UserPromptPart) else ("assistant", p.content)
        for m in history
        for p in m.parts
        if isinstance(p, (UserPromptPart, TextPart))
    ]
    assert texts[-3:] == [("user", "First question"), ("assistant", UNANSWERED), ("user", "Second question")]
    assert not any(
        isinstance(a, ModelRequest) and isinstance(b, ModelRequest) and _is_user(a) and _is_user(b)
        for a, b in zip(history, history[1:], strict=False)
    )
    assert await _stored(db, demo, sid) == [
        ("user", "First question", "failed"),
        ("user", "Second question", "complete"),
        ("assistant", "Answered.", "complete"),
    ]
    with pytest.raises(ConflictError, match="moved on"):  # its turn can no longer be retried
        await _run(orch, demo, sid, "First question", client_key="k1")


def _is_user(message: ModelRequest) -> bool:
    return any(isinstance(p, UserPromptPart) for p in message.parts)


async def test_the_same_key_retries_a_failed_turn_once(db: Database, settings: Settings, demo: Any) -> None:
    sid = await _session(db, demo)
    flaky = Flaky()
    orch = Orchestrator(db, settings, lambda _n, _s: flaky.model)
    assert (await _run(orch, demo, sid, "Plan my week", client_key="k"))[-1].type == "error"
    flaky.failing = False
    retried = await _run(orch, demo, sid, "Plan my week", client_key="k")
    replayed = await _run(orch, demo, sid, "Plan my week", client_key="k")
    assert retried[-1].type == "done" and not retried[-1].data["replayed"]
    assert replayed[-1].data["replayed"] and replayed[-1].data["message_id"] == retried[-1].data["message_id"]
    assert await _stored(db, demo, sid) == [
        ("user", "Plan my week", "complete"),
        ("assistant", "Answered.", "complete"),
    ]


async def test_a_reused_key_with_another_body_is_a_conflict(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _session(db, demo)
    orch = Orchestrator(db, settings, lambda _n, _s: streaming(lambda m, i: ModelResponse([TextPart("ok")])))
    await _run(orch, demo, sid, "Plan my week", client_key="k")
    with pytest.raises(ConflictError, match="different request"):
        await _run(orch, demo, sid, "Something else", client_key="k")
    with pytest.raises(ConflictError, match="different request"):
        await _run(orch, demo, sid, "Plan my week", client_key="k", agent="planner")
    assert len(await _stored(db, demo, sid)) == 2


async def test_refused_turns_store_nothing(db: Database, settings: Settings, demo: Any) -> None:
    task = demo.focus["task"]
    sid = await _session(db, demo, focus_kind="task", focus_id=task)
    orch = Orchestrator(db, settings)
    with pytest.raises(ValidationError, match="unknown agent"):
        await _run(orch, demo, sid, "hello", agent="wizard")
    async with db.transaction() as s:
        await graph.delete_entity(s, demo.user_id, task)
    with pytest.raises(NotFoundError):
        await _run(orch, demo, sid, "hello")
    assert await _stored(db, demo, sid) == []


async def test_a_hanging_model_times_out_per_attempt_and_the_fallback_answers(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _session(db, demo)

    async def hang(messages: list[ModelMessage], info: AgentInfo) -> Any:
        await asyncio.sleep(30)
        yield "never"

    def unused(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("streamed only")

    hanging = FunctionModel(unused, stream_function=hang, model_name="hanging")
    backup = streaming(lambda m, i: ModelResponse([TextPart("from the fallback")]))
    fast = settings.model_copy(update={"model_timeout_seconds": 0.2})
    orch = Orchestrator(db, fast, lambda _n, s: with_fallbacks([hanging, backup], s.model_timeout_seconds))
    events = await _run(orch, demo, sid, "Plan my week")
    assert events[-1].type == "done" and events[-1].data["reply"] == "from the fallback"
    alone = Orchestrator(db, fast, lambda _n, s: with_fallbacks([hanging], s.model_timeout_seconds))
    timed_out = await _run(alone, demo, sid, "Again")
    assert timed_out[-1].data == {
        "message": "the model hanging did not answer within 0.2 s",
        "code": "model_timeout",
        "retry": True,
    }


async def test_a_turn_runs_to_completion_when_its_client_leaves(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _session(db, demo)
    release = asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> Any:
        await release.wait()
        yield "finished anyway"

    orch = Orchestrator(db, settings, lambda _n, _s: FunctionModel(stream_function=slow))
    events = orch.turn(demo.user_id, sid, "Plan my week")
    assert (await anext(events)).type == "agent"
    await events.aclose()  # the client disconnects mid-turn
    release.set()
    await orch.drain()
    assert await _stored(db, demo, sid) == [
        ("user", "Plan my week", "complete"),
        ("assistant", "finished anyway", "complete"),
    ]
