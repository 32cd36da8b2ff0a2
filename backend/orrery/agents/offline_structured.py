"""The offline model's answer in the shape a caller asked for: a reply format (`response_format`) turns
its text into a schema-valid JSON object built from that text, and `max_tokens` cuts the text there
(finish reason `length`), so structured outputs and cut replies work in tests and demos without a key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from orrery.agents.caller import response_format_of

Decide = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def shaped(decide: Decide) -> Decide:
    """`decide`, its text answers cut at the caller's `max_tokens` and put in the caller's format."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        response = decide(messages, info)
        settings = info.model_settings or {}
        if any(isinstance(p, ToolCallPart) for p in response.parts) or not settings:
            return response
        text, cut = _cut(response.text or "", settings.get("max_tokens"))
        format_ = response_format_of(settings)
        if format_ is not None:
            text = json.dumps(structured(format_, text))
        return ModelResponse(parts=[TextPart(text)], finish_reason="length" if cut else "stop")

    return answer


def _cut(text: str, max_tokens: int | None) -> tuple[str, bool]:
    """The first `max_tokens` words (a word is about a token), and whether it was cut."""
    words = text.split(" ")
    if not max_tokens or len(words) <= max_tokens:
        return text, False
    return " ".join(words[:max_tokens]), True


def structured(format_: dict[str, Any], text: str) -> Any:
    """A value of the format built from the answer's text: every string is the text, every other
    value the smallest the schema allows."""
    if format_.get("type") != "json_schema":
        return {"answer": text}
    schema = (format_.get("json_schema") or {}).get("schema") or {"type": "object"}
    return _value(schema, text, schema, [MAX_VALUES, 0])


MAX_VALUES = 2_000
"""The most values one answer builds: a recursive or very wide schema stops there (null)."""
MAX_DEPTH = 30
"""The deepest one answer nests; below 3 levels only required properties are filled."""


def _value(schema: Any, text: str, root: dict[str, Any], left: list[int]) -> Any:
    """`left`: [values the answer may still build, the current depth]."""
    left[0] -= 1
    if left[0] < 0 or left[1] > MAX_DEPTH or not isinstance(schema, dict):  # huge, or `true`/`false`
        return text if schema is True else None
    left[1] += 1
    try:
        return _shaped(schema, text, root, left)
    finally:
        left[1] -= 1


def _shaped(schema: dict[str, Any], text: str, root: dict[str, Any], left: list[int]) -> Any:  # noqa: PLR0911
    if "$ref" in schema:
        return _value(_resolve(schema["$ref"], root), text, root, left)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        typed = [o for o in options if o.get("type") != "null"] or options
        return _value(typed[0], text, root, left)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or props) if left[1] > 3 else set(props)
        return {name: _value(sub, text, root, left) for name, sub in props.items() if name in required}
    if kind == "array":
        count = min(max(1, int(schema.get("minItems", 1))), 100)
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_value(items, text, root, left) for _ in range(count)]
    return _scalar(kind, schema, text)


def _scalar(kind: str, schema: dict[str, Any], text: str) -> Any:
    if kind == "string":
        limit = schema.get("maxLength")
        return text[:limit] if isinstance(limit, int) else text
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + (1 if "exclusiveMinimum" in schema else 0) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return None


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    """A local `$ref` (`#/$defs/Name`, `#/definitions/Name`) in the root schema."""
    node: Any = root
    for key in ref.removeprefix("#/").split("/"):
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}
