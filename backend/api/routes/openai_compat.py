"""An OpenAI-compatible front door: `GET /v1/models` and `POST /v1/chat/completions`.

`model` names an agent (`orrery/coach`, `orrery/planner`, ...; plain `orrery` lets the router
choose). The conversation lives on the server: the session comes from the `X-Orrery-Session` header,
else from the `user` field (one session per user string, created on first use). From the client only
the **last user message** is taken; earlier messages, system prompts and sampling settings are
ignored because Orrery assembles the context itself. Streaming answers are `chat.completion.chunk`
events ending in `data: [DONE]`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy import select

from backend.agents.definitions import AGENTS
from backend.api.deps import CurrentUser
from backend.api.errors import ERROR_RESPONSES, RATE_LIMITED
from backend.db.models import ChatSession
from backend.errors import ValidationError
from backend.repo import chat, identity

router = APIRouter(prefix="/v1", tags=["openai-compatible"], responses=ERROR_RESPONSES)


class ChatMessage(BaseModel):
    """An OpenAI chat message (only user messages are read)."""

    role: str
    content: str | list[dict[str, Any]] | None = None


class CompletionRequest(BaseModel):
    """The parts of an OpenAI chat-completions request Orrery reads."""

    model: str = "orrery"
    messages: list[ChatMessage] = Field(min_length=1, max_length=500)
    stream: bool = False
    user: str | None = Field(default=None, max_length=200)


@router.get("/models", summary="Agents as OpenAI model ids")
async def models(user: CurrentUser) -> dict[str, Any]:
    """`orrery` (routed) and `orrery/<agent>` for each agent."""
    ids = ["orrery", *(f"orrery/{a}" for a in AGENTS)]
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "created": 0, "owned_by": "orrery"} for i in ids],
    }


def _last_user_text(body: CompletionRequest) -> str:
    for message in reversed(body.messages):
        if message.role == "user":
            if isinstance(message.content, str):
                return message.content
            return " ".join(str(p.get("text", "")) for p in message.content or [] if p.get("type") == "text")
    raise ValidationError("the request has no user message")


async def _session_for(
    request: Request, user_id: uuid.UUID, header: str | None, client_user: str | None
) -> uuid.UUID:
    db = request.app.state.db
    async with db.transaction() as s:
        if header:
            return (await chat.get_session(s, user_id, header)).id
        title = f"openai:{client_user or 'default'}"
        found = (
            await s.execute(
                select(ChatSession.id).where(ChatSession.user_id == user_id, ChatSession.title == title)
            )
        ).scalar_one_or_none()
        if found is not None:
            return uuid.UUID(str(found))
        projects = await identity.list_projects(s, user_id)
        record = await chat.create_session(
            s, user_id, project_id=projects[-1].id if projects else None, title=title
        )
        return record.id


async def _and_rest(first: Any, events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    yield first
    async for event in events:
        yield event


@router.post(
    "/chat/completions",
    summary="OpenAI-compatible chat (one server-side session per conversation)",
    responses=RATE_LIMITED,
)
async def completions(
    body: CompletionRequest,
    request: Request,
    user: CurrentUser,
    x_orrery_session: Annotated[str | None, Header()] = None,
) -> Any:
    """Runs one turn on the server-side session and answers in OpenAI's format."""
    agent = body.model.removeprefix("orrery").strip("/") or None
    if agent is not None and agent not in AGENTS:
        raise ValidationError(f"unknown model {body.model!r}; see GET /v1/models")
    text = _last_user_text(body)
    sid = await _session_for(request, user.id, x_orrery_session, body.user)
    events = request.app.state.orchestrator.turn(user.id, sid, text, agent=agent)
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    if not body.stream:
        done = [e async for e in events][-1]
        if done.type == "error":
            raise ValidationError(f"the model failed: {done.data['message']}")
        usage = done.data["usage"]
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": body.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": done.data["reply"]},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage["input_tokens"] or 0,
                "completion_tokens": usage["output_tokens"] or 0,
                "total_tokens": (usage["input_tokens"] or 0) + (usage["output_tokens"] or 0),
            },
        }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": body.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data)}\n\n"

    first = await anext(events)  # a refused turn (limits) fails here, as a plain HTTP error

    async def stream() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        async for event in _and_rest(first, events):
            if event.type == "text":
                yield chunk({"content": event.data["delta"]})
            elif event.type == "error":
                yield chunk({"content": f"\n[error: {event.data['message']}]"})
        yield chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"X-Orrery-Session": str(sid)})
