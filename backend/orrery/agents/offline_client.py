"""The offline model with the caller's own tools (OpenAI doors, issue 50): with no key, a demo or
a test still sees the suspension work. It calls the caller's tool whose name or description shares
a word with the message (any tool, the first, when a tool call is required), with arguments valid
against the tool's schema (built from the message), and once the result is back it answers with it."""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.tools import ToolDefinition

from orrery.agents.offline_structured import structured

_WORDS = re.compile(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.replace("_", " ").lower()))


def _arguments(tool: ToolDefinition, user: str) -> dict[str, Any]:
    """Arguments valid against the tool's schema, built from the message (`offline_structured`: every
    string is the message, every other value the smallest the schema allows)."""
    schema = tool.parameters_json_schema or {"type": "object"}
    built = structured({"type": "json_schema", "json_schema": {"schema": schema}}, user)
    return built if isinstance(built, dict) else {}


def client_step(user: str, returned: list[Any], info: AgentInfo) -> ModelResponse | None:
    """The caller's tool to call, or the answer from its result; None: nothing of the caller's."""
    external = [t for t in info.function_tools if t.kind == "external"]
    names = {t.name for t in external}
    results = [r for r in returned if isinstance(r, ToolReturnPart) and r.tool_name in names]
    if results:
        said = "; ".join(f"{r.tool_name}: {r.model_response_str()[:500]}" for r in results)
        return ModelResponse(parts=[TextPart(f"Your tools answered: {said}")])
    if returned or not external:
        return None
    asked = _words(user)
    matching = [t for t in external if asked & _words(f"{t.name} {t.description or ''}")]
    chosen = matching or ([] if info.allow_text_output else external)
    if not chosen:
        return None
    return ModelResponse(parts=[ToolCallPart(chosen[0].name, _arguments(chosen[0], user))])
