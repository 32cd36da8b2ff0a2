"""Orrery's direct client for a provider that speaks OpenAI's chat completions (`openai/...`, a
litellm proxy): without litellm's per-call machinery or its import, and without the `openai` SDK's
request layers (`agents.openai_http` posts with aiohttp and fails with the SDK's exceptions).

It sends what litellm sends for the same model (`openai_chat.request_body`, the same base URL and
key variables, litellm's `max_tokens` -> `max_completion_tokens` for the gpt-5 series; models whose
requests litellm rewrites further stay on litellm, see `agents.protocol`), and behaves as
`LiteLLMModel` does: retries in Orrery's visible loop (`openai_chat.with_retries`), a refused or
missing key a `ProviderCredentialsError` naming the variable, a stream that ends without a finish
reason reported truncated. A stream is read as server-sent events straight into dicts
(`openai_sse`). Inside a server (`openai_http.pooled`) requests share one connection pool per event
loop, closed when the server stops.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

from orrery.agents import openai_chat, openai_http, openai_sse
from orrery.agents.credentials import REFUSED, ProviderCredentialsError

if TYPE_CHECKING:
    import aiohttp

OPENAI_KEY = "OPENAI_API_KEY"
DEFAULT_BASE = "https://api.openai.com/v1"


def openai_base_url() -> str:
    """Where litellm sends an `openai/...` model (pinned litellm: `OPENAI_BASE_URL`, then
    `OPENAI_API_BASE`, then OpenAI's API)."""
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or DEFAULT_BASE


def _renames(model: str) -> dict[str, str]:
    """litellm's parameter renames for this model (gpt-5 series: `max_tokens` is
    `max_completion_tokens`; `gpt-5-chat` models take `max_tokens`)."""
    reasoning = ("gpt-5" in model or "gpt-6" in model) and "gpt-5-chat" not in model
    return {"max_tokens": "max_completion_tokens"} if reasoning else {}


class OpenAIModel(Model):
    """`OpenAIModel("openai/gpt-4o-mini")`: the provider is sent `gpt-4o-mini` (`sent_name`)."""

    def __init__(
        self,
        model_name: str,
        *,
        sent_name: str | None = None,
        timeout: float = 60.0,
        num_retries: int = 2,
        base_url: str | None = None,
        api_key: str | None = None,
        key_variable: str = OPENAI_KEY,
        system: str = "openai",
    ) -> None:
        super().__init__()
        self._model_name, self._sent_name = model_name, sent_name or model_name
        self.timeout, self.num_retries = timeout, num_retries
        self._base_url, self.api_key, self.key_variable = base_url, api_key, key_variable
        self._system = system
        self._renames = _renames(self._sent_name)

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        return self._system

    @property
    def base_url(self) -> str:
        return self._base_url or openai_base_url()

    def _url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        key = self.api_key or os.environ.get(self.key_variable)
        if not key:
            raise ProviderCredentialsError(f"the model provider needs credentials: set {self.key_variable}")
        return openai_http.headers(key, os.environ.get("OPENAI_ORGANIZATION") or None)

    def _body(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> dict[str, Any]:
        body = openai_chat.request_body(self._sent_name, messages, settings, params)
        for old, new in self._renames.items():
            if old in body:
                body[new] = body.pop(old)
        return body

    def _refused(self, exc: Exception) -> ProviderCredentialsError | None:
        if getattr(exc, "status_code", None) in REFUSED:
            return ProviderCredentialsError(f"the provider refused the credentials: set {self.key_variable}")
        return None

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        settings, params = self.prepare_request(model_settings, model_request_parameters)
        body, url, sent = self._body(messages, settings, params), self._url(), self._headers()

        async def attempt() -> Any:
            async with openai_http.post(url, body, sent, self.timeout) as response:
                return await openai_http.read_json(response)

        data = await openai_chat.with_retries(attempt, self.num_retries, self._refused)
        choice = (data.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        parts: list[Any] = [TextPart(message["content"])] if message.get("content") else []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = function.get("arguments") or "{}"
            parts.append(ToolCallPart(function.get("name", ""), arguments, tool_call_id=call.get("id")))
        return ModelResponse(
            parts=parts,
            usage=openai_chat.usage(data.get("usage")),
            model_name=self._model_name,
            provider_name=self._system,
            provider_response_id=data.get("id"),
            finish_reason=openai_chat.finish_reason(choice.get("finish_reason")),
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
        body = self._body(messages, settings, params) | openai_chat.STREAM
        url, sent = self._url(), self._headers()
        async with AsyncExitStack() as stack:
            response = await openai_chat.with_retries(
                lambda: stack.enter_async_context(openai_http.post(url, body, sent, self.timeout)),
                self.num_retries,
                self._refused,
            )
            yield OpenAIStreamedResponse(
                model_request_parameters=params,
                _model_name=self._model_name,
                _provider_name=self._system,
                _response=response,
                _url=url,
            )


@dataclass
class OpenAIStreamedResponse(StreamedResponse):
    """Text and tool-call deltas from the provider's server-sent events, read as dicts."""

    _model_name: str = ""
    _provider_name: str = "openai"
    _response: aiohttp.ClientResponse | None = None
    _url: str = ""
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        assert self._response is not None
        async for chunk in openai_sse.chunks(openai_http.lines(self._response), self._url):
            self.provider_response_id = self.provider_response_id or chunk.get("id")
            if chunk.get("usage"):
                self._usage = openai_chat.usage(chunk["usage"])
            choices = chunk.get("choices")
            if not choices:
                continue
            reason = choices[0].get("finish_reason")
            if reason:  # a stream that ends without one is stored as truncated
                self.finish_reason = openai_chat.finish_reason(reason)
            delta = choices[0].get("delta") or {}
            calls = [
                (c.get("index", 0), c.get("id"), (c.get("function") or {}).get("name"), _arguments(c))
                for c in delta.get("tool_calls") or ()
            ]
            for event in openai_chat.delta_events(self._parts_manager, delta.get("content"), calls):
                yield event

    async def close_stream(self) -> None:
        if self._response is not None:
            self._response.release()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return self._provider_name

    @property
    def provider_url(self) -> None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


def _arguments(call: dict[str, Any]) -> str | None:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    return arguments if isinstance(arguments, str) else None
