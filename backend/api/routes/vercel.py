"""The Vercel AI SDK UI-message stream, so a `useChat` front end works unchanged.

`POST /v1/sessions/{id}/chat` accepts the SDK's request body but trusts only the **last user
message** from it: the history is the server's session. The reply streams as UI-message chunks
(pydantic-ai's own Vercel types) with the `x-vercel-ai-ui-message-stream: v1` header.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import TypeAdapter
from pydantic_ai.ui.vercel_ai.request_types import RequestData
from pydantic_ai.ui.vercel_ai.response_types import (
    BaseChunk,
    ErrorChunk,
    FinishChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolOutputAvailableChunk,
)

from backend.api.deps import CurrentUser
from backend.api.errors import ERROR_RESPONSES, RATE_LIMITED
from backend.errors import ValidationError

router = APIRouter(prefix="/v1/sessions", tags=["chat"], responses=ERROR_RESPONSES)
HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "Cache-Control": "no-cache"}
SDK_VERSION = 5
_REQUEST = TypeAdapter(RequestData)


def last_user_text(body: Any) -> str:
    """The text of the request's last user message."""
    data = _REQUEST.validate_python(body)
    for message in reversed(data.messages):
        if message.role == "user":
            text = " ".join(getattr(p, "text", "") for p in message.parts if getattr(p, "type", "") == "text")
            if text.strip():
                return text
    raise ValidationError("the request has no user message with text")


def _chunks(event: Any, text_id: str, state: dict[str, bool]) -> list[BaseChunk]:
    out: list[BaseChunk] = []
    if event.type == "text":
        if not state["text_open"]:
            state["text_open"] = True
            out.append(TextStartChunk(id=text_id))
        out.append(TextDeltaChunk(id=text_id, delta=event.data["delta"]))
    elif event.type == "tool_call":
        out.append(
            ToolInputAvailableChunk(
                tool_call_id=event.data["id"], tool_name=event.data["name"], input=event.data["args"]
            )
        )
    elif event.type == "tool_result":
        out.append(ToolOutputAvailableChunk(tool_call_id=event.data["id"], output=event.data["content"]))
    elif event.type == "error":
        out.append(ErrorChunk(error_text=event.data["message"]))
    return out


@router.post(
    "/{session_id}/chat", summary="Vercel AI SDK UI-message stream (useChat)", responses=RATE_LIMITED
)
async def vercel_chat(session_id: str, request: Request, user: CurrentUser) -> StreamingResponse:
    """Run a turn for the last user message and stream it in the AI SDK's UI-message protocol."""
    try:
        text = last_user_text(await request.json())
    except ValueError as exc:
        raise ValidationError(f"not a Vercel AI SDK chat request: {exc}") from None
    events = request.app.state.orchestrator.turn(user.id, session_id, text)
    first = await anext(events)  # unknown sessions fail here, as a plain HTTP error
    text_id = f"text-{uuid.uuid4().hex[:12]}"

    async def stream() -> AsyncIterator[str]:
        state = {"text_open": False}
        yield f"data: {StartChunk(message_id=f'msg-{uuid.uuid4().hex[:12]}').encode(SDK_VERSION)}\n\n"
        yield f"data: {StartStepChunk().encode(SDK_VERSION)}\n\n"
        for chunk in _chunks(first, text_id, state):
            yield f"data: {chunk.encode(SDK_VERSION)}\n\n"
        async for event in events:
            for chunk in _chunks(event, text_id, state):
                yield f"data: {chunk.encode(SDK_VERSION)}\n\n"
        if state["text_open"]:
            yield f"data: {TextEndChunk(id=text_id).encode(SDK_VERSION)}\n\n"
        yield f"data: {FinishChunk(finish_reason='stop').encode(SDK_VERSION)}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers=HEADERS)
