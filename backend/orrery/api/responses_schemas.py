"""The OpenAI Responses API wire format Orrery speaks: the request it reads, the `response` object
and the stream's events (`response.created` ... `response.completed`), each with its
`sequence_number`, in the shapes the `openai` SDK's stream accumulator and the Agents SDK expect."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

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


class EchoedItem(BaseModel):
    """An output item a client sends back in its next `input` (the Agents SDK resends a response's
    items): the `mcp_call` items of Orrery's own tools, reasoning, references. Accepted, not read:
    Orrery has them stored."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["mcp_call", "mcp_list_tools", "reasoning", "item_reference"]


class TextConfig(BaseModel):
    """`text.format`: `text`, `json_object`, or `json_schema` (the reply is validated against it)."""

    format: dict[str, Any] | None = None
    verbosity: Text | None = None


class ResponsesRequest(ClientBody):
    """The parts of a Responses API request Orrery reads. `instructions`, system/developer messages,
    `text.format`, `temperature`, `top_p` and `max_output_tokens` are the caller's options
    (`api.openai_caller`); `tools` and `tool_choice` are served (`api.openai_tools`); `include`,
    `metadata` and `reasoning` are accepted and not used."""

    model: str = Field(default="orrery", max_length=200)
    input: Text | list[InputMessage | FunctionCallItem | FunctionCallOutputItem | EchoedItem] = Field(
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
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_output_tokens: int | None = Field(default=None, ge=1, description="Capped by the operator.")

    def messages(self) -> list[InputMessage]:
        """`input` as messages (a text is one user message)."""
        if isinstance(self.input, str):
            return [InputMessage(role="user", content=self.input)]
        return [item for item in self.input if isinstance(item, InputMessage)]


def response_id(session_id: uuid.UUID, reply_id: uuid.UUID | None = None) -> str:
    """A response id that names its session and the reply it is stored as, so `previous_response_id`
    finds both with no lookup table (the session is still checked to be the caller's)."""
    return f"resp_{session_id.hex}{(reply_id or uuid.uuid4()).hex}"


def _hexes(previous_response_id: str) -> str | None:
    hexes = previous_response_id.removeprefix("resp_")
    ours = previous_response_id.startswith("resp_") and len(hexes) in (48, 64)
    return hexes if ours and all(c in "0123456789abcdef" for c in hexes) else None


def session_of(previous_response_id: str) -> str | None:
    """The session id inside a response id, or None when it is not one of ours."""
    hexes = _hexes(previous_response_id)
    return str(uuid.UUID(hex=hexes[:32])) if hexes else None


def reply_of(previous_response_id: str) -> uuid.UUID | None:
    """The stored reply a response id names (ids made before replies were named carry none)."""
    hexes = _hexes(previous_response_id)
    return uuid.UUID(hex=hexes[32:]) if hexes and len(hexes) == 64 else None


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
        self,
        status: str,
        text: str | None = None,
        usage: dict[str, Any] | None = None,
        error: Any = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The `response` object; `tools`: the server-run tool calls (`mcp_call` items) before the
        message; `status: "incomplete"` says the reply was cut by the token limit."""
        output = [*(tools or []), *([] if text is None else [self.message(text)])]
        incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": output,
            "usage": _usage(usage) if usage is not None else None,
            "error": error,
            "incomplete_details": incomplete,
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


def finished_status(done: dict[str, Any]) -> str:
    """`incomplete` for a reply cut by the token limit, else `completed`."""
    return "incomplete" if done.get("truncated") else "completed"


def tool_item(call: dict[str, Any]) -> dict[str, Any]:
    """A server-run tool call as stored (`id`, `name`, `args`, `result`, `error`) as an `mcp_call`
    output item (name, arguments, output), so a client's trace shows what Orrery ran."""
    failed, content = bool(call.get("error")), call.get("result")
    return {
        "type": "mcp_call",
        "id": f"mcp_{call.get('id') or uuid.uuid4().hex}",
        "server_label": "orrery",
        "name": call.get("name") or "",
        "arguments": json.dumps(call.get("args") or {}),
        "output": None if failed else content,
        "error": (content or "the tool failed") if failed else None,
        "status": "failed" if failed else "completed",
    }


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }
