"""The two ends of a turn suspended on the caller's tool calls: the `done` event that says it
waits (and stores the suspension), and the resumed run that continues it, on any worker, with the
caller's results. The resumed run keeps the suspended one's instructions (its working context), its
agent and its model; the reply that ends it stores every call of the turn, the caller's with their
results, and deletes the suspension in the same transaction."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.usage import RunUsage
from sqlalchemy import select

from orrery.agents.client_tools import ClientTools
from orrery.agents.model_run import ModelRun, stream_model
from orrery.agents.suspensions import (
    NotPendingError,
    abandon,
    calls_with_results,
    closing,
    expired,
    find,
    fresh,
    resumed,
    suspend,
)
from orrery.agents.turn_events import TurnEvent, done_data
from orrery.agents.turn_store import PendingTurn
from orrery.db.models import Message, TurnSuspension
from orrery.ops import observe
from orrery.ops.metered_model import MeteredModel
from orrery.repo import chat
from orrery.roster import get_agent

Orchestrator = Any
"""The orchestrator running the turn (`agents.orchestrator`, which imports this module)."""


def _usage(run: ModelRun, prior: dict[str, int] | None = None) -> dict[str, int]:
    usage = run.result.usage
    prior = prior or {}
    return {
        "input_tokens": (usage.input_tokens or 0) + prior.get("input_tokens", 0),
        "output_tokens": (usage.output_tokens or 0) + prior.get("output_tokens", 0),
    }


async def suspended_event(
    orch: Orchestrator,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    message_id: uuid.UUID | None,
    agent_id: str,
    model: str | None,
    run: ModelRun,
    prior: dict[str, int] | None = None,
    *,
    retried: bool = False,
    memos: list[Any] | None = None,
) -> TurnEvent:
    """Store the suspension (with what assembling the context left to write, `memos`); the `done`
    event names the calls the caller is to run."""
    assert message_id is not None
    row = {
        "session_id": sid,
        "user_id": user_id,
        "message_id": message_id,
        "agent_id": agent_id,
        "model": model,
        "retried": retried,
    }
    usage = _usage(run, prior)
    waiting = await suspend(orch.db, orch.settings, row, run.result, run.calls, usage, memos)
    answered_by = run.result.response.model_name or model or orch.settings.model
    return TurnEvent("done", suspension_data(agent_id, answered_by, waiting.calls, waiting.text, usage))


def suspension_data(
    agent_id: str,
    model: str,
    calls: list[dict[str, Any]],
    text: str,
    usage: dict[str, int],
    replayed: bool = False,
) -> dict[str, Any]:
    """A `done` event's data for a turn that waits for the caller's tool calls."""
    return {
        "message_id": None,
        "agent": agent_id,
        "reply": text,
        "client_tool_calls": calls,
        "tool_calls": [],
        "handoff": None,
        "usage": usage,
        "replayed": replayed,
        "truncated": False,
        "model": model,
    }


async def waiting_on(orch: Orchestrator, user_id: uuid.UUID, sid: uuid.UUID, text: str) -> TurnEvent | None:
    """A repeat of the request that suspended the turn (a retry, or the same Idempotency-Key): the
    same pending calls again, nothing run twice; None when the session waits for nothing like it."""
    async with orch.db.sessions() as s:
        row = await find(s, user_id, sid)
        if row is None:
            return None
        message = await s.get(Message, row.message_id)
    if message is None or message.content != text or expired(row, row.message_id):
        return None
    state = row.state
    return TurnEvent(
        "done",
        suspension_data(
            row.agent_id, row.model or orch.settings.model, state["pending"], "", state["usage"], True
        ),
    )


async def resume_events(
    orch: Orchestrator, user_id: uuid.UUID, sid: uuid.UUID, client: ClientTools
) -> AsyncIterator[TurnEvent]:
    """Under the session's turn lock: check the suspension, then continue its run."""
    async with orch.locks.hold(sid):
        async with orch.db.sessions() as s:
            state = await chat.session_and_latest(s, user_id, sid)
            row = await find(s, user_id, sid)
            if row is None:
                replay = await _answered(s, sid, client)
                if replay is None:
                    raise NotPendingError(
                        f"no tool call {next(iter(client.results))!r} is pending on this conversation"
                    )
                yield TurnEvent("done", done_data(replay, replayed=True))
                return
        latest = state.latest.id if state.latest is not None else None
        if expired(row, latest):
            await abandon(orch.db, row)
            raise NotPendingError(
                f"the tool call {next(iter(client.results))!r} is no longer pending: its turn was abandoned"
            )
        async for event in _continue(orch, user_id, sid, state.chat, row, client):
            yield event


async def _answered(s: Any, sid: uuid.UUID, client: ClientTools) -> Message | None:
    """The stored reply of a turn already resumed with these results (a repeated request)."""
    statement = (
        select(Message)
        .where(Message.session_id == sid, Message.role == "assistant", Message.superseded_at.is_(None))
        .order_by(Message.seq.desc())
        .limit(1)
    )
    latest = (await s.execute(statement)).scalar_one_or_none()
    ids = {c.get("id") for c in (latest.tool_calls or [])} if latest is not None else set()
    return latest if latest is not None and set(client.results) <= ids else None


def _instructions(messages: list[ModelMessage]) -> str:
    return next((m.instructions or "" for m in reversed(messages) if isinstance(m, ModelRequest)), "")


async def _continue(
    orch: Orchestrator,
    user_id: uuid.UUID,
    sid: uuid.UUID,
    record: Any,
    row: TurnSuspension,
    client: ClientTools,
) -> AsyncIterator[TurnEvent]:
    """The suspended run, continued with the caller's results, to its reply (or its next suspension)."""
    started = time.perf_counter()
    client = replace(client, results=fresh(row, client.results))
    going_on = resumed(row, client.results)
    chosen = get_agent(row.agent_id)
    deps = orch.deps_for(user_id, record)
    yield TurnEvent("agent", {"agent": chosen.id})
    run = ModelRun(calls=calls_with_results(row, client.results))
    metered = MeteredModel(orch.models.turn_model(row.model), chosen.id)
    instructions = _instructions(going_on.messages)
    try:
        async for out in stream_model(
            chosen, metered, instructions, [], "", deps, run, None, client, going_on
        ):
            yield out
    except Exception as exc:  # the suspension stays: the caller may send its results again
        observe.turn_failed(exc, agent=chosen.id, user_id=user_id, session_id=sid)
        from orrery.agents.attempts import failure_data

        yield TurnEvent("error", failure_data(exc, sid, logged=True))
        return
    prior = row.state.get("usage") or {}
    if isinstance(run.result.output, DeferredToolRequests):
        retried = bool(row.state.get("retried"))
        yield await suspended_event(
            orch, user_id, sid, row.message_id, chosen.id, row.model, run, prior, retried=retried
        )
        return
    run.result.usage.incr(
        RunUsage(input_tokens=prior.get("input_tokens", 0), output_tokens=prior.get("output_tokens", 0))
    )
    latency = int((time.perf_counter() - started) * 1000)
    pending = PendingTurn(text="", message_id=row.message_id, retried=bool(row.state.get("retried")))
    saved = await orch._finish(  # noqa: SLF001 - the turn's own ending
        user_id, sid, pending, chosen.id, run, latency, deps.handoff, row.model, [closing(sid)], None
    )
    yield TurnEvent("done", done_data(saved, handoff=deps.handoff.to))
