"""An in-process pydantic-ai model over `litellm.acompletion`: any provider litellm knows.

Maps pydantic-ai messages and tools to the OpenAI chat format litellm speaks, and back, with the
same mapping as the direct client (`openai_chat`): text, tool calls, usage, streaming (text and
tool-call deltas), finish reasons (a stream that ends without one is reported truncated). The
request timeout is litellm's own; its retries (`num_retries`) run here instead
(`openai_chat.with_retries`), so that each retry is a `gen_ai.retry` event on the current
model-request span, and a refused key is not retried at all.
Fallback models are tried by the caller (`attempts.with_fallbacks`).
litellm is imported on the first request, never at startup.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

from orrery.agents import litellm_open, openai_body, openai_chat
from orrery.agents.credentials import refused


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # its coloured banners print() outside the log's format
    openai_body.install()  # once; the SDK's body walk skipped where it changes nothing
    litellm_open.install()  # once; a stream is priced from its usage, not by counting at open
    return litellm


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
        options: dict[str, Any] = {"timeout": timeout, "num_retries": 0}  # retried by `_complete`, visibly
        if self.fallbacks:
            options["fallbacks"] = self.fallbacks
        if api_base:
            options["api_base"] = api_base
        if api_key:
            options["api_key"] = api_key
        self._call_options = options

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        return "litellm"

    def _kwargs(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> dict[str, Any]:
        return openai_chat.request_body(self._model_name, messages, settings, params) | self._call_options

    async def _complete(self, kwargs: dict[str, Any]) -> Any:
        """`acompletion`, retried `num_retries` times on what a retry can fix (a timeout, a lost
        connection, 408/409/429 and 5xx: OpenAI's rules), each retry recorded on the current span. A
        refused or missing key is raised as `ProviderCredentialsError` at once, never retried."""
        litellm = _litellm()
        return await openai_chat.with_retries(
            lambda: litellm.acompletion(**kwargs),
            self.num_retries,
            lambda exc: refused(exc, self._model_name, explicit_key=bool(self.api_key)),
        )

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
            usage=openai_chat.usage(getattr(raw, "usage", None)),
            model_name=self._model_name,
            provider_name="litellm",
            provider_response_id=getattr(raw, "id", None),
            finish_reason=openai_chat.finish_reason(getattr(raw.choices[0], "finish_reason", None)),
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
        kwargs = self._kwargs(messages, settings, params) | openai_chat.STREAM
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
                self._usage = openai_chat.usage(chunk.usage)
            if not chunk.choices:
                continue
            reason = getattr(chunk.choices[0], "finish_reason", None)
            if reason:  # a stream that ends without one is stored as truncated
                self.finish_reason = openai_chat.finish_reason(reason)
            delta = chunk.choices[0].delta
            calls = [
                (c.index, c.id, getattr(c.function, "name", None), getattr(c.function, "arguments", None))
                for c in getattr(delta, "tool_calls", None) or ()
            ]
            content = getattr(delta, "content", None)
            for event in openai_chat.delta_events(self._parts_manager, content, calls):
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
