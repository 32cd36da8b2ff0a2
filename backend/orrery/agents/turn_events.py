"""What a turn looks like on the wire (`TurnEvent`s) and to the model (history from scoped messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import AgentRunResultEvent
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolReturnPart,
    UserPromptPart,
)

from orrery.context.working_context import WorkingContext
from orrery.db.models import Message
from orrery.memory.scoping import ScopedMessage
from orrery.memory.turn_view import UNANSWERED as UNANSWERED

EventType = Literal["agent", "context", "text", "tool_call", "tool_result", "done", "error"]
ModelEvent = AgentStreamEvent | AgentRunResultEvent[Any]
TOOL_RESULT_CHARS = 4_000


@dataclass(frozen=True)
class TurnEvent:
    """One streamed event of a turn."""

    type: EventType
    data: dict[str, Any] = field(default_factory=dict)


def context_event(wc: WorkingContext) -> TurnEvent:
    """The `context` event: the receipt, and exactly what the model is about to see."""
    return TurnEvent(
        "context",
        {
            "receipt_tokens": wc.receipt.total_tokens,
            "strategy": wc.receipt.strategy,
            "knowledge": wc.receipt.knowledge,
            "receipt": wc.receipt.as_dict(),
            "system_prompt": wc.system_prompt,
            "messages": wc.messages,
        },
    )


def is_text(event: TurnEvent) -> bool:
    """Whether the event is a text delta (the only kind that joins)."""
    return event.type == "text"


def joined(first: TurnEvent, second: TurnEvent) -> TurnEvent | None:
    """Text deltas waiting together travel as one event (one SSE write instead of one per token)."""
    if first.type == "text" and second.type == "text":
        return TurnEvent("text", {"delta": first.data["delta"] + second.data["delta"]})
    return None


def history_of(messages: list[ScopedMessage], failed: frozenset[str] = frozenset()) -> list[ModelMessage]:
    """Scoped messages as pydantic-ai history (role and content only). A user message whose turn failed
    (its text is in `failed`) and that has no reply after it is followed by a note saying so, never by
    another bare user message; user messages a strategy kept without their replies stay as they are."""
    history: list[ModelMessage] = []
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            history.append(ModelResponse(parts=[TextPart(m["content"])]))
        elif m["role"] == "system":
            history.append(ModelRequest(parts=[SystemPromptPart(m["content"])]))
        else:
            history.append(ModelRequest(parts=[UserPromptPart(m["content"])]))
            answered = i + 1 < len(messages) and messages[i + 1]["role"] == "assistant"
            if not answered and any(m["content"].endswith(f) for f in failed):  # dates prefix the text
                history.append(ModelResponse(parts=[TextPart(UNANSWERED)]))
    return history


def done_data(saved: Message, *, replayed: bool = False, handoff: str | None = None) -> dict[str, Any]:
    """The `done` event's data for a stored assistant message; `model`: the model that answered, as
    stored with it (a fallback's name when one did), so a replay names it too."""
    return {
        "message_id": str(saved.id),
        "seq": saved.seq,
        "agent": saved.agent_id,
        "reply": saved.content,
        "tool_calls": saved.tool_calls or [],
        "handoff": handoff,
        "usage": {"input_tokens": saved.prompt_tokens, "output_tokens": saved.completion_tokens},
        "latency_ms": saved.latency_ms,
        "replayed": replayed,
        "truncated": saved.status == "truncated",
        "model": saved.model,
    }


def translate(
    event: AgentStreamEvent | AgentRunResultEvent[Any], calls: dict[str, dict[str, Any]]
) -> list[TurnEvent]:
    """A pydantic-ai stream event as the turn events clients see (tool calls recorded in `calls`)."""
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart) and event.part.content:
        return [TurnEvent("text", {"delta": event.part.content})]
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return [TurnEvent("text", {"delta": event.delta.content_delta})]
    if isinstance(event, FunctionToolCallEvent):
        call = {
            "id": event.part.tool_call_id,
            "name": event.part.tool_name,
            "args": event.part.args_as_dict(),
        }
        calls[event.part.tool_call_id] = call
        return [TurnEvent("tool_call", dict(call))]
    if isinstance(event, FunctionToolResultEvent):
        part = event.part
        content = part.model_response_str() if isinstance(part, ToolReturnPart) else part.model_response()
        failed = isinstance(part, RetryPromptPart) or getattr(part, "outcome", "success") != "success"
        if part.tool_call_id in calls:
            calls[part.tool_call_id]["result"] = content[:TOOL_RESULT_CHARS]
            calls[part.tool_call_id]["error"] = failed
        name = getattr(part, "tool_name", None)
        return [
            TurnEvent(
                "tool_result",
                {
                    "id": part.tool_call_id,
                    "name": name,
                    "content": content[:TOOL_RESULT_CHARS],
                    "error": failed,
                },
            )
        ]
    return []
