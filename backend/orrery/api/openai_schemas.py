"""The OpenAI chat-completions wire format Orrery speaks: requests, responses, stream chunks, errors.

Typed so the OpenAPI document describes them, and so errors have OpenAI's own shape
(`{"error": {"message", "type", "param", "code"}}`), which the `openai` SDK turns into its exceptions.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StrictBool, StrictInt

from orrery.services.limits import Text
from orrery.validation import ClientBody


class ContentPart(ClientBody):
    """One part of a multi-part message; only `text` parts are read."""

    type: Text
    text: Text | None = None


class ChatMessage(ClientBody):
    """An OpenAI chat message (only user messages are read)."""

    role: Text
    content: Text | list[ContentPart] | None = None
    tool_call_id: Text | None = Field(default=None, max_length=200)
    """A `role: "tool"` message's call: its content is that call's result (issue 50)."""

    def text(self) -> str:
        """The message's text, parts joined by spaces."""
        if isinstance(self.content, str):
            return self.content
        return " ".join(p.text or "" for p in self.content or [] if p.type == "text")


class StreamOptions(ClientBody):
    """`include_usage: true` adds a final chunk with the turn's token usage."""

    include_usage: StrictBool = False


class CompletionRequest(ClientBody):
    """The parts of an OpenAI chat-completions request Orrery reads: the last user message is the
    turn, system/developer messages, `response_format` and the sampling settings are the caller's
    options (`api.openai_caller`); `tools` are served (`api.openai_tools`); `n` > 1 and the legacy
    `functions` are refused (`api.openai_params`);
    `store: false` maps to a chat not remembered (`remember_for_store`)."""

    model: str = Field(default="orrery", max_length=200)
    messages: list[ChatMessage] = Field(
        min_length=1,
        max_length=500,
        json_schema_extra={"contains": {"properties": {"role": {"const": "user"}}, "required": ["role"]}},
        description="Read: the last user message, which must have text.",
    )
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    user: Text | None = Field(default=None, max_length=200)
    store: StrictBool | None = Field(
        default=None,
        description="false: the chat is not remembered (never recalled in another chat, no facts, no "
        "patterns); true or absent: a new chat is remembered, an existing one keeps its setting",
    )
    tools: list[dict[str, Any]] | None = Field(
        default=None,
        max_length=128,
        description="The caller's function tools: a call of one ends the response with `tool_calls`.",
    )
    tool_choice: str | dict[str, Any] | None = Field(
        default=None, description='"auto", "none", "required" or `{"type": "function", ...}`.'
    )
    functions: list[dict[str, Any]] | None = Field(default=None, max_length=128, description="Refused.")
    function_call: str | dict[str, Any] | None = Field(
        default=None, description='Refused unless "auto"/"none".'
    )
    response_format: dict[str, Any] | None = Field(
        default=None,
        description="`json_schema` (validated reply) or `json_object`; `text` is the default.",
    )
    n: int | None = Field(default=None, ge=1, le=128, description="Refused unless 1.")
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1, description="Capped by the operator's limit.")
    max_completion_tokens: int | None = Field(default=None, ge=1, description="As `max_tokens`.")
    stop: Text | list[Text] | None = Field(default=None, max_length=4)
    seed: StrictInt | None = None


def remember_for_store(store: bool | None) -> bool:
    """OpenAI's `store` as Orrery's `remember` (chat completions and the Responses API alike): only
    an explicit `store: false` asks not to keep what is said for later, so only it turns `remember`
    off; `true` or absent opens a remembered chat and never turns an existing chat's choice back on."""
    return store is not False


class ModelCard(BaseModel):
    """One model id (an agent)."""

    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "orrery"
    description: str = ""
    """What the id runs: the agent, and the chat model behind it (the offline model says so)."""


class ModelList(BaseModel):
    """`GET /v1/models`."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class AssistantMessage(BaseModel):
    """The reply."""

    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[dict[str, Any]] | None = None
    """The caller's tools the model called: the turn waits for their results (issue 50)."""


class Choice(BaseModel):
    """The one choice Orrery returns."""

    index: int = 0
    message: AssistantMessage
    finish_reason: Literal["stop", "tool_calls", "length"] = "stop"
    """`tool_calls`: the turn waits for the caller's tools; `length`: the reply was cut by the token
    limit (stored `truncated`)."""


class Usage(BaseModel):
    """Token usage of the turn."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int

    @classmethod
    def of(cls, usage: dict[str, Any]) -> Usage:
        """From the orchestrator's `done` usage (None counts as 0)."""
        prompt, completion = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
        return cls(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


class ChatCompletion(BaseModel):
    """A non-streamed answer."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


class OpenAIErrorDetail(BaseModel):
    """OpenAI's error object."""

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIError(BaseModel):
    """Errors this door raises itself (unknown model, model failure)."""

    error: OpenAIErrorDetail


OPENAI_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": OpenAIError, "description": "Invalid request (`invalid_request_error`, naming `param`)"},
    401: {"model": OpenAIError, "description": "Missing, malformed or revoked API key (`invalid_api_key`)"},
    404: {"model": OpenAIError, "description": "Unknown model, session or route"},
    409: {"model": OpenAIError, "description": "Idempotency-Key reused with a different request"},
    413: {"model": OpenAIError, "description": "The request body is larger than ORRERY_MAX_BODY_BYTES"},
    431: {"model": OpenAIError, "description": "The request headers are larger than 32 KB"},
    503: {"model": OpenAIError, "description": "Busy or unreachable database; retry after `Retry-After` s"},
}
"""The errors of the OpenAI-compatible routes, all in OpenAI's shape (`api.openai_errors`)."""

OPENAI_RATE_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {"model": OpenAIError, "description": "A per-user limit is reached; retry after `Retry-After` s"}
}


def openai_error(
    status: int, message: str, *, type_: str, code: str, param: str | None = None
) -> JSONResponse:
    """An error response in OpenAI's shape."""
    body = OpenAIError(error=OpenAIErrorDetail(message=message, type=type_, param=param, code=code))
    return JSONResponse(body.model_dump(), status_code=status)


STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""What an OpenAI-door stream sends so a proxy neither caches nor buffers it."""


def finish_reason(done: dict[str, Any]) -> Literal["stop", "length", "tool_calls"]:
    """A finished turn's `finish_reason`: `tool_calls` when it waits for the caller's tools,
    `length` when the reply was cut by the token limit."""
    if done.get("client_tool_calls"):
        return "tool_calls"
    return "length" if done.get("truncated") else "stop"


def sse(data: dict[str, Any] | str) -> str:
    """One `data:` line of an OpenAI stream."""
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
