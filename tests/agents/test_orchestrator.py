"""A chat turn end to end with scripted models: persistence, tools, handoff, failures, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import func, select

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import CheckIn
from orrery.errors import ValidationError
from orrery.memory.messages import append_message
from orrery.repo import chat
from tests.support.db_events import transactions_begun
from tests.support.models import streaming


class Script:
    """A model that plays steps in order: a str is a text reply, a tuple `(tool, args)` a tool call,
    an exception is raised. `done()` fails the test if a step was left unused."""

    def __init__(self, *steps: Any) -> None:
        self.queue = list(steps)
        self.seen: list[list[ModelMessage]] = []
        self.model = streaming(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        step = self.queue.pop(0)
        if isinstance(step, Exception):
            raise step
        if isinstance(step, tuple):
            return ModelResponse(parts=[ToolCallPart(step[0], step[1])])
        return ModelResponse(parts=[TextPart(step)])

    def done(self) -> None:
        assert not self.queue, f"unused scripted steps: {self.queue}"


def scripted(*steps: Any) -> tuple[Script, list[list[ModelMessage]]]:
    """A `Script` and the messages it saw."""
    script = Script(*steps)
    return script, script.seen


async def _setup(db: Database, demo: Any, **focus: Any) -> Any:
    """A new chat session in the demo workspace (`demo`: a copy of the demo-loaded template)."""
    async with db.transaction() as s:
        c = await chat.create_session(s, demo.user_id, project_id=demo.project_id, **focus)
    return c.id


async def _run(orch: Orchestrator, demo: Any, sid: Any, message: str | None, **kw: Any) -> list[Any]:
    return [e async for e in orch.turn(demo.user_id, sid, message, **kw)]


async def test_turn_persists_both_messages_with_attribution(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)
    model, _ = scripted("Start with the legal review.")
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    events = await _run(orch, demo, sid, "What should I do next on the pricing work?")
    types = [e.type for e in events]
    assert types[:2] == ["agent", "context"] and types[-1] == "done" and "text" in types
    assert "".join(e.data["delta"] for e in events if e.type == "text") == "Start with the legal review."
    async with db.sessions() as s:
        messages = await chat.list_messages(s, demo.user_id, sid)
        transitions = await chat.list_transitions(s, demo.user_id, sid)
        check_ins = (await s.execute(select(func.count()).select_from(CheckIn))).scalar_one()
    assert [(m.seq, m.role, m.agent_id) for m in messages] == [(1, "user", None), (2, "assistant", "planner")]
    assert messages[1].latency_ms is not None and messages[1].completion_tokens
    assert [t.to_agent for t in transitions] == ["planner"] and "next" in (transitions[0].reason or "")
    assert check_ins >= 9
    model.done()


async def test_each_turns_context_holds_its_own_message_and_the_earlier_turns(
    db: Database, settings: Settings, demo: Any
) -> None:
    """The store hands the session's row on to assembly: its count must include the new message,
    so the context (and the model) sees it after the earlier exchange, on every turn."""
    sid = await _setup(db, demo, focus_kind="task", focus_id=demo.focus["task"])
    model, seen = scripted("First answer.", "Second answer.")
    contexts: list[Any] = []
    orch = Orchestrator(db, settings, lambda name, s: model.model, on_context=contexts.append)
    await _run(orch, demo, sid, "What is this task about?")
    await _run(orch, demo, sid, "And what comes after it?")
    first, second = ([m["content"] for m in wc.messages] for wc in contexts)
    assert first[-1:] == ["What is this task about?"]
    assert second[-3:] == ["What is this task about?", "First answer.", "And what comes after it?"]
    prompts = [p.content for m in seen[1] for p in getattr(m, "parts", []) if p.part_kind == "user-prompt"]
    assert prompts == ["What is this task about?", "And what comes after it?"]
    model.done()


async def test_tool_calls_get_real_data_and_are_recorded(db: Database, settings: Settings, demo: Any) -> None:
    async with db.transaction() as s:
        sid = (
            await chat.create_session(
                s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"]
            )
        ).id
    model, seen = scripted(
        (
            "get_linked_entities",
            {"entity_id": str(demo.focus["task"]), "entity_kind": "task", "filter_kind": "plan"},
        ),
        "It belongs to Launch marketing.",
    )
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    events = await _run(orch, demo, sid, "Which plan is this in?")
    result = next(e for e in events if e.type == "tool_result")
    assert "Launch marketing" in result.data["content"] and not result.data["error"]
    returned = [p for p in seen[1][-1].parts if isinstance(p, ToolReturnPart)]
    assert "### Plans (1 total)" in str(returned[0].content)
    async with db.sessions() as s:
        reply = (await chat.list_messages(s, demo.user_id, sid))[-1]
    assert reply.tool_calls is not None and reply.tool_calls[0]["name"] == "get_linked_entities"
    assert "Launch marketing" in reply.tool_calls[0]["result"]
    model.done()


async def test_handoff_changes_the_agent_and_records_a_transition(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)
    model, _ = scripted(
        ("handoff_to_agent", {"agent": "motivator", "reason": "the user sounds drained"}),
        "Handing you to the motivator.",
        "You shipped a lot this week.",
    )
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    first = await _run(orch, demo, sid, "I need help deciding")
    assert first[-1].data["handoff"] == "motivator" and first[-1].data["agent"] == "coach"
    second = await _run(orch, demo, sid, "honestly I'm exhausted")
    assert second[0].data == {"agent": "motivator"}
    async with db.sessions() as s:
        transitions = await chat.list_transitions(s, demo.user_id, sid)
    assert [(t.from_agent, t.to_agent) for t in transitions] == [(None, "coach"), ("coach", "motivator")]
    assert transitions[1].reason == "the user sounds drained" and transitions[1].message_id is not None
    model.done()


@pytest.mark.parametrize(
    "failure",
    [TimeoutError("model timed out"), RuntimeError("429 Too Many Requests"), RuntimeError("500 upstream")],
)
async def test_failures_leave_the_session_consistent_and_retry_works(
    db: Database, settings: Settings, failure: Exception, demo: Any
) -> None:
    sid = await _setup(db, demo)
    model, _ = scripted(failure, "Recovered answer.")
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    events = await _run(orch, demo, sid, "Plan my week")
    assert events[-1].type == "error" and events[-1].data["retry"]
    async with db.sessions() as s:
        assert [m.role for m in await chat.list_messages(s, demo.user_id, sid)] == ["user"]
    retried = await _run(orch, demo, sid, None)
    assert retried[-1].type == "done" and retried[-1].data["reply"] == "Recovered answer."
    async with db.sessions() as s:
        messages = await chat.list_messages(s, demo.user_id, sid)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Plan my week"),
        ("assistant", "Recovered answer."),
    ]
    with pytest.raises(ValidationError, match="nothing to retry"):
        await _run(orch, demo, sid, None)
    model.done()


async def test_malformed_tool_arguments_are_retried_by_the_model(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)
    model, _ = scripted(
        ("get_linked_entities", {"entity_id": 5}),
        ("get_linked_entities", {"entity_id": "x", "entity_kind": "task"}),
        "Sorry, I could not find that entity.",
    )
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    events = await _run(orch, demo, sid, "what is linked to x?")
    assert events[-1].type == "done" and [e.data["error"] for e in events if e.type == "tool_result"] == [
        True,
        True,
    ]


async def test_concurrent_turns_on_one_session_keep_order(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)

    def echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        return ModelResponse(parts=[TextPart(f"re: {getattr(last, 'content', '')}")])

    orch = Orchestrator(db, settings, lambda name, s: streaming(echo))
    await asyncio.gather(*(_run(orch, demo, sid, f"message {i}") for i in range(4)))
    async with db.sessions() as s:
        messages = await chat.list_messages(s, demo.user_id, sid)
    assert [m.role for m in messages] == ["user", "assistant"] * 4
    for user, reply in zip(messages[::2], messages[1::2], strict=True):
        assert reply.content == f"re: {user.content}"


async def test_offline_model_answers_the_plan_question_from_context(
    db: Database, settings: Settings, demo: Any
) -> None:
    async with db.transaction() as s:
        sid = (
            await chat.create_session(
                s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"]
            )
        ).id
    orch = Orchestrator(db, settings)
    events = await _run(orch, demo, sid, "What plan does this task belong to?")
    done = events[-1]
    assert done.type == "done" and "Offline model" not in done.data["reply"]  # said by the doors, not stored
    assert "Launch marketing" in done.data["reply"] and done.data["tool_calls"] == []
    events = await _run(orch, demo, sid, "What is this task blocked by?")
    assert [e.data["name"] for e in events if e.type == "tool_call"] == ["get_linked_entities"]
    assert "Legal review of pricing terms" in events[-1].data["reply"]


async def test_empty_and_foreign_messages_are_refused(db: Database, settings: Settings, demo: Any) -> None:
    sid = await _setup(db, demo)
    orch = Orchestrator(db, settings)
    with pytest.raises(ValidationError, match="must not be empty"):
        await _run(orch, demo, sid, "   ")
    async with db.transaction() as s:
        from tests.support.factories import make_user

        eve = await make_user(s, "Eve")
    from orrery.errors import NotFoundError

    with pytest.raises(NotFoundError):
        _ = [e async for e in orch.turn(eve.id, sid, "hi")]


async def test_summary_strategy_compacts_with_the_turns_model(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)
    async with db.transaction() as s:
        record = await chat.get_session(s, demo.user_id, sid)
        record.scoping_strategy = "summary"
        for i in range(12):
            await append_message(
                s,
                demo.user_id,
                sid,
                chat.NewMessage("user" if i % 2 == 0 else "assistant", f"older message {i}"),
            )
    prompts: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text = "".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        if "running summary" in (messages[0].instructions or ""):
            prompts.append(text)
            return ModelResponse(parts=[TextPart("SUMMARY: older messages discussed")])
        return ModelResponse(parts=[TextPart("ok")])

    orch = Orchestrator(db, settings, lambda name, s: streaming(respond))
    events = await _run(orch, demo, sid, "and now?", model="scripted")
    assert events[-1].type == "done" and prompts and "older message 0" in prompts[0]


async def test_pattern_analyst_refreshes_and_merges_the_summary(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:
            args = {
                "patterns": ["Asks for next steps after lunch"],
                "wins": ["Got usage-based price points approved"],
                "struggles": [],
            }
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        return ModelResponse(parts=[TextPart("noted")])

    orch = Orchestrator(
        db, settings.model_copy(update={"pattern_refresh_minutes": 1e-6}), lambda n, s: streaming(respond)
    )
    await _run(orch, demo, sid, "what next?", model="scripted")
    await orch.drain()
    async with db.sessions() as s:
        from orrery.repo.memory import get_user_summary

        summary = await get_user_summary(s, demo.user_id)
    assert summary is not None
    assert summary.patterns[0] == "Asks for next steps after lunch" and len(summary.patterns) == 4  # merged
    assert summary.wins.count("Got usage-based price points approved") == 1  # no duplicate
    assert summary.struggles == [
        "Context switching between pricing work and release engineering",
        "Saying no to meeting requests during focus time",
    ]


async def test_a_model_that_times_out_is_an_error_and_a_retry_works(
    db: Database, settings: Settings, demo: Any
) -> None:
    sid = await _setup(db, demo)
    slow = {"first": True}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("fast now")])

    from pydantic_ai.models.function import FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        if slow.pop("first", False):
            await asyncio.sleep(5)
        yield "fast now"

    orch = Orchestrator(
        db,
        settings.model_copy(update={"model_timeout_seconds": 1.0}),
        lambda n, s: FunctionModel(respond, stream_function=stream),
    )
    first = await _run(orch, demo, sid, "anything")
    assert first[-1].type == "error" and "did not answer within 1 s" in first[-1].data["message"]
    retried = await _run(orch, demo, sid, None)
    assert retried[-1].type == "done" and retried[-1].data["reply"] == "fast now"


async def test_a_plain_turn_needs_no_transaction(db: Database, settings: Settings, demo: Any) -> None:
    """Once the session's first turn has chosen its agent and checked the user in, a turn writes
    only its two messages, one statement each, so neither needs a transaction (no BEGIN/COMMIT
    round trips; on SQLite no `BEGIN IMMEDIATE`: the insert counts the message by a trigger)."""
    sid = await _setup(db, demo)
    model, _ = scripted("First.", "Second.")
    orch = Orchestrator(db, settings, lambda name, s: model.model)
    await _run(orch, demo, sid, "What should I do next on the pricing work?")
    with transactions_begun(db) as begun:
        events = await _run(orch, demo, sid, "And after that?")
    assert events[-1].type == "done"
    assert sum(begun) == 0
    async with db.sessions() as s:
        messages = await chat.list_messages(s, demo.user_id, sid)
        record = await chat.get_session(s, demo.user_id, sid)
    assert [(m.seq, m.role, m.content) for m in messages][2:] == [
        (3, "user", "And after that?"),
        (4, "assistant", "Second."),
    ]
    assert record.message_count == 4 and record.updated_at == messages[-1].created_at
    model.done()
