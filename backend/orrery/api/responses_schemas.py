"""The OpenAI Responses API wire format Orrery speaks: the request it reads, the `response` object
and the stream's events (`response.created` ... `response.completed`), each with its
`sequence_number`, in the shapes the `openai` SDK's stream accumulator and the Agents SDK expect."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, StrictBool

from orrery.api.openai_schemas import sse
from orrery.api.responses_tools import FunctionCallItem, FunctionCallOutputItem
from orrery.services.limits import Text
from orrery.validation import ClientBody


class InputPart(BaseModel):
    """One content part; `input_text` / `output_text` / `text` parts are read."""

    type: Text
    text: Text | None = None


class InputMessage(BaseModel):
    """A message item of `input` (ids and statuses are ignored; the tool items are
    `api.responses_tools`')."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "developer"]
    content: Text | list[InputPart]

    def text(self) -> str:
        """The message's text, parts joined by spaces."""
        if isinstance(self.content, str):
            return self.content
        return " ".join(p.text or "" for p in self.content if p.type in {"input_text", "output_text", "text"})


class TextConfig(BaseModel):
    """`text`: only the plain-text format is served (`format: {"type": "text"}`)."""

    format: dict[str, Any] | None = None
    verbosity: Text | None = None


class ResponsesRequest(ClientBody):
    """The parts of a Responses API request Orrery reads. Sampling settings, `include`,
    `metadata`, `reasoning` and `instructions` are accepted and ignored (Orrery assembles the
    context itself); `tools` and `tool_choice` are served (`api.openai_tools`); `text.format` is
    refused unless it asks for nothing (`api.openai_params`)."""

    model: str = Field(default="orrery", max_length=200)
    input: Text | list[InputMessage | FunctionCallItem | FunctionCallOutputItem] = Field(
        description="A text, or messages; the last user message is the turn.", max_length=500
    )
    instructions: Text | None = None
    previous_response_id: str | None = Field(default=None, max_length=100)
    stream: StrictBool = False
    store: StrictBool = True
    user: Text | None = Field(default=None, max_length=200)
    tools: list[dict[str, Any]] | None = Field(default=None, max_length=128)
    tool_choice: str | dict[str, Any] | None = None
    text: TextConfig | None = None

    def messages(self) -> list[InputMessage]:
        """`input` as messages (a text is one user message)."""
        if isinstance(self.input, str):
            return [InputMessage(role="user", content=self.input)]
        return [item for item in self.input if isinstance(item, InputMessage)]


def response_id(session_id: uuid.UUID) -> str:
    """A response id that names its session, so `previous_response_id` finds it with no lookup table
    (the session is still checked to be the caller's)."""
    return f"resp_{session_id.hex}{uuid.uuid4().hex[:16]}"


def session_of(previous_response_id: str) -> str | None:
    """The session id inside a response id, or None when it is not one of ours."""
    hexes = previous_response_id.removeprefix("resp_")
    if not previous_response_id.startswith("resp_") or len(hexes) != 48:
        return None
    try:
        return str(uuid.UUID(hex=hexes[:32]))
    except ValueError:
        return None


@dataclass
class ResponseDraft:
    """One response while it is made: its ids and what the stream has said so far."""

    id: str
    model: str
    store: bool
    previous_response_id: str | None
    created_at: int = field(default_factory=lambda: int(time.time()))
    message_id: str = field(default_factory=lambda: f"msg_{uuid.uuid4().hex}")
    sequence: int = 0

    def message(
        self, text: str, status: str = "completed", content: list[Any] | None = None
    ) -> dict[str, Any]:
        """The assistant message output item (`content`: its parts, by default the one text part)."""
        if content is None:
            content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        return {
            "type": "message",
            "id": self.message_id,
            "status": status,
            "role": "assistant",
            "content": content,
        }

    def body(
        self, status: str, text: str | None = None, usage: dict[str, Any] | None = None, error: Any = None
    ) -> dict[str, Any]:
        """The `response` object."""
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": [] if text is None else [self.message(text)],
            "usage": _usage(usage) if usage is not None else None,
            "error": error,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "parallel_tool_calls": False,
            "previous_response_id": self.previous_response_id,
            "store": self.store,
            "temperature": None,
            "text": {"format": {"type": "text"}},
            "tool_choice": "none",
            "tools": [],
            "top_p": None,
            "truncation": "disabled",
        }

    def event(self, type_: str, **data: Any) -> str:
        """One SSE event (`event:` and `data:` lines), numbered."""
        self.sequence += 1
        payload = {"type": type_, "sequence_number": self.sequence - 1, **data}
        return f"event: {type_}\n" + sse(payload)


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }
