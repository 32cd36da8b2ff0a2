"""The offline model's stream: decided before it opens, replayed one item per turn of the event loop,
with the same items, events and usage as pydantic-ai's `FunctionModel` stream."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai._instrumentation import get_instructions
from pydantic_ai._utils import estimate_string_tokens
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
    FunctionStreamedResponse,
)
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage


def _pieces(response: ModelResponse) -> list[str | DeltaToolCalls]:
    """The response as a stream's items: a text part word by word, a tool call whole."""
    items: list[str | DeltaToolCalls] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            items += re.findall(r"\S+\s*", part.content)
        elif isinstance(part, ToolCallPart):
            items.append(
                {0: DeltaToolCall(name=part.tool_name, json_args=json.dumps(part.args), tool_call_id=None)}
            )
    return items


async def _replay(items: list[str | DeltaToolCalls]) -> AsyncIterator[str | DeltaToolCalls]:
    """The items one per turn of the event loop, as a provider's chunks arrive (and as the
    peekable stream's checkpoints had them), so a turn's stream keeps its shape under load."""
    for i, item in enumerate(items):
        if i:
            await asyncio.sleep(0)
        yield item


class OfflineModel(FunctionModel):
    """`FunctionModel` over the offline model's decision (`offline._decide`), whose stream is decided
    before it opens: the same items, events and usage as `FunctionModel`'s stream, without the
    peekable wrapper that takes a lock and a cancel scope for each of a reply's ~50 words (over half
    of the offline model's CPU)."""

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        model_settings, model_request_parameters = self.prepare_request(
            model_settings, model_request_parameters
        )
        info = AgentInfo(
            function_tools=model_request_parameters.declared_function_tools,
            allow_text_output=model_request_parameters.allow_text_output,
            output_tools=model_request_parameters.output_tools,
            model_settings=model_settings,
            model_request_parameters=model_request_parameters,
            instructions=get_instructions(messages, model_request_parameters),
        )
        decided = self.function(messages, info) if self.function else None
        if not isinstance(decided, ModelResponse):  # the offline model decides synchronously
            raise TypeError("the offline model's function must return a ModelResponse")
        items = _pieces(decided)
        if not items:
            raise ValueError("Stream function must return at least one item")
        stream = _OfflineStream(
            model_request_parameters=model_request_parameters,
            _model_name=self.model_name,
            _iter=_replay(items),
        )
        stream.finish_reason = decided.finish_reason  # `length` when cut at the caller's max_tokens
        yield stream


@dataclass
class _OfflineStream(FunctionStreamedResponse):
    """`FunctionStreamedResponse` with a text item's tokens added up as a number and put in the
    usage once at the end (the same total): adding a `RequestUsage` copies it, once per word."""

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        tokens = 0
        async for item in self._iter:
            if isinstance(item, str):
                tokens += estimate_string_tokens(item) if item else 0
                for event in self._parts_manager.handle_text_delta(vendor_part_id="content", content=item):
                    yield event
            else:
                for event in self._map_item(item):
                    yield event
        self._usage += RequestUsage(output_tokens=tokens)
