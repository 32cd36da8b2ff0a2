"""OpenAI's chat-completions format, shared by both clients of a real model (direct and litellm).

One mapping each way, so both send the same body and read the same events: pydantic-ai messages
and tools to OpenAI chat messages and tools, a response's usage and finish reason back, a streamed
delta (text, tool-call pieces) to pydantic-ai's part events. Also the one retry loop: OpenAI's rules
for what to retry (no wait between attempts), each retry a `gen_ai.retry` event on the current
model-request span, a refused key never retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from opentelemetry import trace
from pydantic_ai._parts_manager import ModelResponsePartsManager
from pydantic_ai.messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelResponseStreamEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

SETTINGS = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "stop_sequences": "stop",
}
"""pydantic-ai settings a request carries, and their name in OpenAI's body."""
STREAM = {"stream": True, "stream_options": {"include_usage": True}}
FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "content_filter": "content_filter",
}
T = TypeVar("T")
ToolDelta = tuple[int, str | None, str | None, str | None]
"""A streamed piece of a tool call: (index, id, name, arguments)."""


def retryable(exc: Exception) -> bool:
    """What OpenAI's clients retry: a timeout or lost connection, and 408, 409, 429 and 5xx."""
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    if not isinstance(exc, openai.APIError) or not isinstance(status, int):
        return False
    return status in (408, 409, 429) or status >= 500


async def with_retries(
    call: Callable[[], Awaitable[T]], retries: int, refused: Callable[[Exception], Exception | None]
) -> T:
    """`call()`, retried `retries` times on what a retry can fix, each retry recorded on the current
    span; what `refused` turns into a credentials error is raised at once, never retried."""
    for attempt in range(1, retries + 2):
        try:
            return await call()
        except Exception as exc:
            credentials = refused(exc)
            if credentials is not None:
                raise credentials from exc
            if attempt > retries or not retryable(exc):
                raise
            trace.get_current_span().add_event(
                "gen_ai.retry",
                {
                    "gen_ai.retry.attempt": attempt,
                    "error.type": type(exc).__name__,
                    "error.message": str(exc)[:300],
                },
            )
    raise AssertionError("unreachable: the last attempt returns or raises")


def request_body(
    model: str, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
) -> dict[str, Any]:
    """The chat-completions body both clients send (litellm adds only its own call options)."""
    body: dict[str, Any] = {"model": model, "messages": openai_messages(messages)}
    tools = openai_tools(params)
    if tools:
        body["tools"] = tools
        if not params.allow_text_output:
            body["tool_choice"] = "required"
    if settings:
        for key, name in SETTINGS.items():
            if settings.get(key) is not None:
                body[name] = settings[key]  # type: ignore[literal-required]
        extra = settings.get("extra_body")  # a caller's `response_format` (`agents.caller`)
        if isinstance(extra, dict):
            body.update(extra)
    return body


def openai_messages(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """pydantic-ai history -> OpenAI chat messages (instructions first, as a system message)."""
    out: list[dict[str, Any]] = []
    instructions = next(
        (m.instructions for m in reversed(messages) if isinstance(m, ModelRequest) and m.instructions), None
    )
    if instructions:
        out.append({"role": "system", "content": instructions})
    for message in messages:
        if isinstance(message, ModelRequest):
            out.extend(_request_parts(message))
        else:
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            calls = [
                {
                    "id": p.tool_call_id,
                    "type": "function",
                    "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
                }
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            entry: dict[str, Any] = {"role": "assistant"}
            if text:  # no `content: null` beside tool calls: litellm drops it, so both send the same
                entry["content"] = text
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
    return out


def _request_parts(message: ModelRequest) -> Iterator[dict[str, Any]]:
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            yield {"role": "system", "content": part.content}
        elif isinstance(part, UserPromptPart):
            content = part.content if isinstance(part.content, str) else " ".join(map(str, part.content))
            yield {"role": "user", "content": content}
        elif isinstance(part, ToolReturnPart):
            yield {"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response_str()}
        elif isinstance(part, RetryPromptPart):
            if part.tool_name:
                yield {"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()}
            else:
                yield {"role": "user", "content": part.model_response()}


def openai_tools(params: ModelRequestParameters) -> list[dict[str, Any]]:
    """Function and output tools in the OpenAI `tools` format."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description or "",
                "parameters": t.parameters_json_schema,
            },
        }
        for t in [*params.function_tools, *params.output_tools]
    ]


def usage(raw: Any) -> RequestUsage:
    """A response's or a stream's usage (a dict, or litellm's object) as pydantic-ai's."""
    if raw is None:
        return RequestUsage()
    get = raw.get if isinstance(raw, dict) else lambda k, d=None: getattr(raw, k, d)
    return RequestUsage(
        input_tokens=int(get("prompt_tokens", 0) or 0), output_tokens=int(get("completion_tokens", 0) or 0)
    )


def finish_reason(raw: str | None) -> FinishReason | None:
    """OpenAI's finish reason as pydantic-ai's (an unknown one is a stop; none is None)."""
    return FINISH_REASONS.get(raw, "stop") if raw else None


def delta_events(
    parts: ModelResponsePartsManager, content: str | None, calls: Iterable[ToolDelta]
) -> Iterator[ModelResponseStreamEvent]:
    """The part events of one streamed delta: its text, then its tool-call pieces."""
    if content:
        yield from parts.handle_text_delta(vendor_part_id="content", content=content)
    for index, call_id, name, arguments in calls:
        yield from parts.handle_tool_call_delta_events(
            vendor_part_id=index, tool_name=name or None, args=arguments or None, tool_call_id=call_id or None
        )
