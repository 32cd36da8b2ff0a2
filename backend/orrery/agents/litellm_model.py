"""An in-process pydantic-ai model over `litellm.acompletion`: any provider litellm knows.

Maps pydantic-ai messages and tools to the OpenAI chat format litellm speaks, and back: text,
tool calls, usage, streaming (text and tool-call deltas), finish reasons (a stream that ends without
one is reported truncated). The request timeout is litellm's own; its retries (`num_retries`) run
here instead (OpenAI's rules for what to retry, no wait between attempts), so that each retry is a
`gen_ai.retry` event on the current model-request span, and a refused key is not retried at all.
Fallback models are tried by the caller (`attempts.with_fallbacks`).
litellm is imported on the first request, never at startup.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace
from pydantic_ai.messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from orrery.agents import litellm_open, openai_body
from orrery.agents.credentials import refused


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # its coloured banners print() outside the log's format
    openai_body.install()  # once; the SDK's body walk skipped where it changes nothing
    litellm_open.install()  # once; a stream is priced from its usage, not by counting at open
    return litellm


def _retryable(exc: Exception) -> bool:
    """What OpenAI's clients retry: a timeout or lost connection, and 408, 409, 429 and 5xx."""
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    if not isinstance(exc, openai.APIError) or not isinstance(status, int):
        return False
    return status in (408, 409, 429) or status >= 500


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
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    out.append({"role": "system", "content": part.content})
                elif isinstance(part, UserPromptPart):
                    content = (
                        part.content if isinstance(part.content, str) else " ".join(map(str, part.content))
                    )
                    out.append({"role": "user", "content": content})
                elif isinstance(part, ToolReturnPart):
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": part.tool_call_id,
                            "content": part.model_response_str(),
                        }
                    )
                elif isinstance(part, RetryPromptPart):
                    if part.tool_name:
                        out.append(
                            {
                                "role": "tool",
                                "tool_call_id": part.tool_call_id,
                                "content": part.model_response(),
                            }
                        )
                    else:
                        out.append({"role": "user", "content": part.model_response()})
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
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
    return out


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


def _usage(raw: Any) -> RequestUsage:
    if raw is None:
        return RequestUsage()
    get = raw.get if isinstance(raw, dict) else lambda k, d=None: getattr(raw, k, d)
    return RequestUsage(
        input_tokens=int(get("prompt_tokens", 0) or 0), output_tokens=int(get("completion_tokens", 0) or 0)
    )


_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "content_filter": "content_filter",
}


def _provider_sent_no_finish_reason(stream: Any) -> bool:
    """litellm ends every stream with a synthetic `stop`; its wrapper remembers whether the provider
    really sent a finish reason (pinned litellm: `received_finish_reason`, `intermittent_finish_reason`)."""
    received = getattr(stream, "received_finish_reason", "unknown")
    return received is None and getattr(stream, "intermittent_finish_reason", None) is None


class LiteLLMModel(Model):
    """`LiteLLMModel("anthropic/claude-sonnet-4-5")`, `LiteLLMModel("ollama/llama3")`, ..."""

    def __init__(
        self,
        model_name: str,
        *,
        timeout: float = 60.0,
        num_retries: int = 2,
        fallbacks: list[str] | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
    ) -> None:
        super().__init__()
        self._model_name = model_name
        self.timeout, self.num_retries, self.fallbacks = timeout, num_retries, fallbacks or []
        self.api_base, self.api_key = api_base, api_key

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        return "litellm"

    def _kwargs(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self._model_name,
            "messages": openai_messages(messages),
            "timeout": self.timeout,
            "num_retries": 0,  # retried by `_complete`, visibly
        }
        tools = openai_tools(params)
        if tools:
            kwargs["tools"] = tools
            if not params.allow_text_output:
                kwargs["tool_choice"] = "required"
        for key in ("max_tokens", "temperature", "top_p", "seed", "stop_sequences"):
            if settings and settings.get(key) is not None:
                kwargs["stop" if key == "stop_sequences" else key] = settings[key]
        if self.fallbacks:
            kwargs["fallbacks"] = self.fallbacks
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs

    async def _complete(self, kwargs: dict[str, Any]) -> Any:
        """`acompletion`, retried `num_retries` times on what a retry can fix (a timeout, a lost
        connection, 408/409/429 and 5xx: OpenAI's rules), each retry recorded on the current span. A
        refused or missing key is raised as `ProviderCredentialsError` at once, never retried."""
        litellm = _litellm()
        for attempt in range(1, self.num_retries + 2):
            try:
                return await litellm.acompletion(**kwargs)
            except Exception as exc:
                credentials = refused(exc, self._model_name, explicit_key=bool(self.api_key))
                if credentials is not None:
                    raise credentials from exc
                if attempt > self.num_retries or not _retryable(exc):
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

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        settings, params = self.prepare_request(model_settings, model_request_parameters)
        raw = await self._complete(self._kwargs(messages, settings, params))
        message = raw.choices[0].message
        parts: list[Any] = []
        if message.content:
            parts.append(TextPart(message.content))
        for call in message.tool_calls or []:
            parts.append(
                ToolCallPart(call.function.name, call.function.arguments or "{}", tool_call_id=call.id)
            )
        return ModelResponse(
            parts=parts,
            usage=_usage(getattr(raw, "usage", None)),
            model_name=self._model_name,
            provider_name="litellm",
            provider_response_id=getattr(raw, "id", None),
            finish_reason=_FINISH_REASONS.get(getattr(raw.choices[0], "finish_reason", None) or ""),
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        settings, params = self.prepare_request(model_settings, model_request_parameters)
        kwargs = self._kwargs(messages, settings, params) | {
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        stream = await self._complete(kwargs)
        yield LiteLLMStreamedResponse(
            model_request_parameters=params, _model_name=self._model_name, _stream=stream
        )


@dataclass
class LiteLLMStreamedResponse(StreamedResponse):
    """Text and tool-call deltas from litellm's OpenAI-style chunks."""

    _model_name: str = ""
    _stream: Any = None
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        async for chunk in self._stream:
            self.provider_response_id = self.provider_response_id or getattr(chunk, "id", None)
            if getattr(chunk, "usage", None):
                self._usage = _usage(chunk.usage)
            if not chunk.choices:
                continue
            reason = getattr(chunk.choices[0], "finish_reason", None)
            if reason:  # a stream that ends without one is stored as truncated
                self.finish_reason = _FINISH_REASONS.get(reason, "stop")
            delta = chunk.choices[0].delta
            if getattr(delta, "content", None):
                for event in self._parts_manager.handle_text_delta(
                    vendor_part_id="content", content=delta.content
                ):
                    yield event
            for call in getattr(delta, "tool_calls", None) or []:
                function = call.function
                for event in self._parts_manager.handle_tool_call_delta_events(
                    vendor_part_id=call.index,
                    tool_name=getattr(function, "name", None) or None,
                    args=getattr(function, "arguments", None) or None,
                    tool_call_id=call.id or None,
                ):
                    yield event
        if _provider_sent_no_finish_reason(self._stream):
            self.finish_reason = None

    async def close_stream(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return "litellm"

    @property
    def provider_url(self) -> None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp
