"""Scripted pydantic-ai models for tool tests (no real LLM is ever called)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def calls(tool: str, args: dict[str, Any]) -> FunctionModel:
    """A model that calls `tool` once with `args`, then answers with what the tool returned."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, RetryPromptPart):
            return ModelResponse(parts=[TextPart(f"TOOL SAID: {last.model_response()}")])
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"TOOL SAID: {last.content}")])
        return ModelResponse(parts=[ToolCallPart(tool, args)])

    return FunctionModel(respond)


def streaming(respond: Any, model_name: str | None = None) -> FunctionModel:
    """A FunctionModel that also streams: the same responses, as text deltas and tool-call deltas;
    `model_name`: the model id its replies name as having answered (a priced litellm id)."""
    import json

    from pydantic_ai.models.function import DeltaToolCall

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        response = respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args)
                yield {
                    index: DeltaToolCall(name=part.tool_name, json_args=args, tool_call_id=part.tool_call_id)
                }

    return FunctionModel(respond, stream_function=stream, model_name=model_name)
