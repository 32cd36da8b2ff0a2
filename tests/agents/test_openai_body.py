"""The lean chat body (`orrery.agents.openai_body`) is the body the OpenAI SDK's own transform builds,
and anything it cannot vouch for takes the SDK's path."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from openai import NOT_GIVEN, omit
from openai._utils import PropertyInfo, async_maybe_transform
from openai.types.chat import ChatCompletionMessage
from openai.types.chat import completion_create_params as params
from typing_extensions import TypedDict

from orrery.agents import openai_body

TOOL = {
    "type": "function",
    "function": {
        "name": "search_knowledge",
        "description": "Search.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "pattern": "^[a-z]+$"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "what next?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_knowledge", "arguments": '{"query":"b"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "- **B-1:** billing"},
    {"role": "user", "content": [{"type": "text", "text": "and then?"}]},
]


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "messages": MESSAGES,
        "model": "gpt-4o-mini",
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [TOOL],
        "tool_choice": "required",
        "temperature": 0.2,
        "seed": NOT_GIVEN,
        "top_p": omit,
    } | extra


def _both(body: dict[str, Any], expected: Any = params.CompletionCreateParamsStreaming) -> tuple[Any, Any]:
    lean = openai_body.lean_transform(async_maybe_transform, {expected})
    return asyncio.run(lean(body, expected)), asyncio.run(async_maybe_transform(body, expected))


def test_the_lean_body_is_the_sdks_body() -> None:
    lean, sdk = _both(_body())
    assert lean == sdk
    assert "seed" not in lean and "top_p" not in lean  # omitted parameters dropped, as the SDK does
    lean, sdk = _both(_body(messages=tuple(MESSAGES)))  # an iterable: the same JSON goes out
    assert json.dumps(lean) == json.dumps(sdk)


def test_a_body_it_cannot_vouch_for_takes_the_sdks_path() -> None:
    calls: list[object] = []

    async def sdk(data: object, expected_type: object) -> object:
        calls.append(data)
        return data

    lean = openai_body.lean_transform(sdk, {params.CompletionCreateParamsStreaming})
    inner_sentinel = _body(stream_options={"include_usage": NOT_GIVEN})
    model_inside = _body(messages=[*MESSAGES, ChatCompletionMessage(role="assistant", content="ok")])
    for body in (inner_sentinel, model_inside):
        asyncio.run(lean(body, params.CompletionCreateParamsStreaming))
    asyncio.run(lean({"metadata": {}}, params.CompletionCreateParamsNonStreaming))  # not a lean type
    assert len(calls) == 3


class Renamed(TypedDict):
    card_id: Annotated[str, PropertyInfo(alias="cardID")]


class Outer(TypedDict):
    cards: list[Renamed]


def test_only_types_without_renamed_keys_are_lean() -> None:
    assert not openai_body.renames_nothing(Outer)
    assert openai_body.renames_nothing(params.CompletionCreateParamsStreaming)
    assert openai_body.install() and openai_body.install()  # in use, and installed once
