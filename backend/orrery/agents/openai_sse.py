"""A chat-completions stream read as server-sent events straight into dicts.

The `openai` SDK's `AsyncStream` builds a `ChatCompletionChunk` model for every event; the direct
client only reads a few keys of each, so it parses the events itself and keeps the SDK's
behaviour: `data: [DONE]` ends the stream, an event whose data carries an `error` is raised as the
SDK's `APIError`; a connection lost mid-body raises httpx's own error (`openai_http.lines`, as it
does through the SDK).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any


async def chunks(lines: AsyncIterator[str], url: str) -> AsyncIterator[dict[str, Any]]:
    """Each event's JSON data from the body's `lines`, until `[DONE]` or the end of the body. After
    `[DONE]` the body is read to its end, as the SDK does: a connection whose response was read
    whole is kept for the next request (cut short, it is closed and the next one connects again)."""
    events = _events(lines)
    async for data in events:
        if data.startswith("[DONE]"):
            async for _ in events:
                pass
            return
        chunk = json.loads(data)
        if isinstance(chunk, dict) and chunk.get("error"):
            raise _stream_error(url, chunk["error"])
        yield chunk


async def _events(body: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each event (its `data:` lines joined), as the SSE format defines; `event:`,
    `id:`, `retry:` and comments are not needed for chat completions."""
    lines: list[str] = []
    async for line in body:
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
        elif line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    if lines:
        yield "\n".join(lines)


def _stream_error(url: str, error: Any) -> Exception:
    """The SDK's exception for an error event inside a 200 stream."""
    import openai

    from orrery.agents.openai_http import request_of

    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    failure: Exception = openai.APIError(message=message, request=request_of(url), body=error)
    return failure
