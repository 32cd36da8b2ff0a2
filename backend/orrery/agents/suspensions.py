"""Turns suspended on the caller's tool calls, kept in the database (`turn_suspensions`) so any
worker, after any restart, resumes them.

A suspension holds the run so far: the pydantic-ai messages up to the response that called the
caller's tools, the answers of the server tools that ran in that step, the calls seen (for the
stored reply) and the usage. Resuming checks the caller's results against the pending call ids (a
result for any other call is refused), puts them after the server answers and continues the run;
the reply that ends the turn deletes the row in its own transaction. Past `expires_at` (or once the
chat moved on) the suspension is abandoned: the row is deleted and its message marked `failed`, which
the chat shows as an unanswered message.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.model_loop import Resumed
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.memos import Memo, write_memos
from orrery.db.models import Message, TurnSuspension
from orrery.errors import ValidationError
from orrery.ops.jobs import RunLater, enqueue_once

EXPIRE_JOB = "expire_suspension"
"""The durable job that abandons a suspension nobody resumed, on any worker, once it is due."""


class NotPendingError(ValidationError):
    """A tool result for a call the session is not waiting for (a 400 naming the call)."""

    param = "tool_call_id"


@dataclass(frozen=True)
class Suspended:
    """A turn waiting for the caller: its pending calls (OpenAI's `id`, `name`, `arguments`)."""

    calls: list[dict[str, Any]]
    text: str
    usage: dict[str, int]


def pending_calls(requests: DeferredToolRequests) -> list[dict[str, Any]]:
    return [
        {"id": c.tool_call_id, "name": c.tool_name, "arguments": c.args_as_json_str()} for c in requests.calls
    ]


async def suspend(
    db: Database,
    settings: Settings,
    row: dict[str, Any],
    result: Any,
    calls: dict[str, dict[str, Any]],
    usage: dict[str, int],
    memos: list[Memo] | None = None,
) -> Suspended:
    """Store (or replace) the session's suspension: `row` names its session, user, message, agent
    and model (and `retried`: its message was marked failed before); `result` is the run's, ending
    in `DeferredToolRequests`. What assembling the context left to write (`memos`) is written
    with it, and the job that abandons it when it is due is queued in the same transaction."""
    requests: DeferredToolRequests = result.output
    pending = pending_calls(requests)
    for call in requests.calls:  # the stored reply lists the caller's calls with the server's, in order
        calls[call.tool_call_id] = {
            "id": call.tool_call_id,
            "name": call.tool_name,
            "args": call.args_as_dict(),
            "client": True,
        }
    messages = result.all_messages()
    state = {
        "messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
        "pending": pending,
        "calls": list(calls.values()),
        "usage": usage,
        "retried": row.pop("retried", False),
    }
    expires = utcnow() + timedelta(seconds=settings.client_tool_timeout_seconds)
    sid, message = row["session_id"], row["message_id"]
    async with db.transaction() as s:
        await write_memos(s, memos or [])
        await s.execute(delete(TurnSuspension).where(TurnSuspension.session_id == sid))
        s.add(TurnSuspension(**row, state=state, expires_at=expires))
        payload = {"session_id": str(sid), "message_id": str(message)}
        key = f"{EXPIRE_JOB}:{sid}:{message}"
        await enqueue_once(s, EXPIRE_JOB, payload, key=key, max_attempts=5, run_after=expires)
    text = "".join(getattr(p, "content", "") for p in messages[-2].parts if p.part_kind == "text")
    return Suspended(pending, text, usage)


async def find(s: AsyncSession, user_id: uuid.UUID, sid: uuid.UUID) -> TurnSuspension | None:
    """The caller's suspension on the session (someone else's session has none)."""
    statement = select(TurnSuspension).where(
        TurnSuspension.session_id == sid, TurnSuspension.user_id == user_id
    )
    return (await s.execute(statement)).scalar_one_or_none()


def fresh(row: TurnSuspension, results: dict[str, str]) -> dict[str, str]:
    """The results not already part of the turn: a caller that resends its whole history (the Agents
    SDK does) sends the results of the turn's earlier steps again; they are not sent twice."""
    answered = {c["id"] for c in row.state["calls"] if "result" in c}
    return {i: r for i, r in results.items() if i not in answered}


def resumed(row: TurnSuspension, results: dict[str, str]) -> Resumed:
    """The run to continue with the caller's results; a result for a call not pending is refused,
    and so is a pending call left without one."""
    pending = {c["id"]: c for c in row.state["pending"]}
    stray = [i for i in results if i not in pending]
    if stray:
        raise NotPendingError(f"no tool call {stray[0]!r} is pending on this conversation")
    missing = [i for i in pending if i not in results]
    if missing:
        raise ValidationError(f"the result of the pending tool call {missing[0]!r} is missing")
    messages = ModelMessagesTypeAdapter.validate_python(row.state["messages"])
    served = messages[-1]
    assert isinstance(served, ModelRequest)
    answers: list[Any] = list(served.parts)
    answers += [ToolReturnPart(c["name"], results[i], i) for i, c in pending.items()]
    return Resumed(messages[:-1], answers)


def calls_with_results(row: TurnSuspension, results: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The calls the turn made so far, the caller's with the results it sent."""
    calls = {c["id"]: dict(c) for c in row.state["calls"]}
    for call_id, content in results.items():
        calls[call_id].update(result=content[:4_000], error=False)
    return calls


def closing(sid: uuid.UUID) -> Memo:
    """The suspension's deletion, written with the reply that ends the turn."""
    return Memo(TurnSuspension, {}, key={"session_id": sid}, delete=True)


def expired(row: TurnSuspension, latest: uuid.UUID | None) -> bool:
    """Past its time, or the chat moved on (its message is no longer the latest)."""
    return row.expires_at <= utcnow() or latest != row.message_id


async def abandon(db: Database, row: TurnSuspension) -> None:
    """Drop the suspension and mark its message failed: one transaction, nothing half-written."""
    async with db.transaction() as s:
        await s.execute(delete(TurnSuspension).where(TurnSuspension.session_id == row.session_id))
        await s.execute(update(Message).where(Message.id == row.message_id).values(status="failed"))


async def expire_job(db: Database, payload: dict[str, Any]) -> None:
    """Abandon the suspension the job was queued for, if it is still there and due (a resumed turn
    that suspended again is due later: the job waits for it)."""
    sid, message = uuid.UUID(payload["session_id"]), uuid.UUID(payload["message_id"])
    async with db.sessions() as s:
        row = await s.get(TurnSuspension, sid)
    if row is None or row.message_id != message:
        return
    if row.expires_at > utcnow():
        raise RunLater(row.expires_at)
    await abandon(db, row)
