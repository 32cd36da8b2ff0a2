"""Stored messages in the Vercel AI SDK's own forms: `UIMessage`s to reload a chat with (`useChat`'s
`messages`), and a finished reply as a UI-message stream (what `resumeStream()` receives when it
reconnects to a turn that was running).

A message's UI id is its stored id; the live stream announces the reply's id in its `start` chunk
before the reply is stored (`Orchestrator.turn(reply_id=...)`), so a streamed message and the same
message reloaded have one id. Tool calls are the typed `tool-<name>` parts the live stream makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic_ai.ui.vercel_ai.request_types import (
    TextUIPart,
    ToolOutputAvailablePart,
    ToolOutputErrorPart,
    UIMessage,
)
from pydantic_ai.ui.vercel_ai.response_types import (
    BaseChunk,
    DoneChunk,
    ErrorChunk,
    FinishChunk,
    FinishStepChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolOutputAvailableChunk,
    ToolOutputErrorChunk,
)

from orrery.db.models import Message

STREAM_HEADERS = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",  # no proxy or browser cache holds a live stream
    "x-accel-buffering": "no",  # nginx passes chunks on as they come instead of buffering them
}


def ui_message(message: Message) -> UIMessage:
    """One stored user or assistant message as a `UIMessage`."""
    parts: list[Any] = []
    for call in message.tool_calls or []:
        if call.get("error"):
            parts.append(
                ToolOutputErrorPart(
                    type=f"tool-{call['name']}",
                    tool_call_id=call["id"],
                    input=call.get("args"),
                    error_text=str(call.get("result") or "the tool failed"),
                )
            )
        else:
            parts.append(
                ToolOutputAvailablePart(
                    type=f"tool-{call['name']}",
                    tool_call_id=call["id"],
                    input=call.get("args"),
                    output=call.get("result"),
                )
            )
    parts.append(TextUIPart(text=message.content, state="done"))
    role = "user" if message.role == "user" else "assistant"
    return UIMessage(id=str(message.id), role=role, parts=parts, metadata={"seq": message.seq})


def finished_reply_chunks(reply: Message | None, failure: str | None) -> Iterator[BaseChunk]:
    """A turn that ended while the client was away, as one UI-message stream: the stored reply
    (tool calls, then its text) under its stored id, or the turn's failure as an `error` chunk."""
    yield StartChunk(message_id=str(reply.id) if reply is not None else None)
    yield StartStepChunk()
    if reply is not None:
        yield from _tool_chunks(reply.tool_calls or [])
        text_id = f"{reply.id}-text"
        yield TextStartChunk(id=text_id)
        yield TextDeltaChunk(id=text_id, delta=reply.content)
        yield TextEndChunk(id=text_id)
    else:
        yield ErrorChunk(error_text=failure or "the turn failed")
    yield FinishStepChunk()
    yield FinishChunk(finish_reason="stop" if reply is not None else "error")
    yield DoneChunk()


def _tool_chunks(calls: list[dict[str, Any]]) -> Iterator[BaseChunk]:
    for call in calls:
        yield ToolInputAvailableChunk(tool_call_id=call["id"], tool_name=call["name"], input=call.get("args"))
        if call.get("error"):
            yield ToolOutputErrorChunk(tool_call_id=call["id"], error_text=str(call.get("result")))
        else:
            yield ToolOutputAvailableChunk(tool_call_id=call["id"], output=call.get("result"))
