"""A model wrapper that times every model request into `orrery_model_seconds` for one agent.

Timing the request itself (not the turn) keeps tool time and context assembly out of model latency.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from orrery.ops.metrics import MODEL_SECONDS


class MeteredModel(WrapperModel):
    """`wrapped`, with each request's wall time observed under `agent`. It calls `wrapped` itself,
    not `WrapperModel`'s methods: each model class's methods carry pydantic-ai's boundary wrappers
    (two context managers a stream), and a turn's model is already three classes deep."""

    def __init__(self, wrapped: Model, agent: str) -> None:
        super().__init__(wrapped)
        self.agent = agent

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        started = time.perf_counter()
        try:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        finally:
            MODEL_SECONDS.labels(agent=self.agent).observe(time.perf_counter() - started)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        started = time.perf_counter()
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
        finally:
            MODEL_SECONDS.labels(agent=self.agent).observe(time.perf_counter() - started)
