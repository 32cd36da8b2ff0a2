"""What an application calling through an OpenAI door asks of a turn: its instructions, the shape of
the reply (`response_format` / `text.format`) and its sampling settings.

Orrery still assembles the context; the caller's system/developer messages and `instructions` are
one more section of it ("The caller's instructions", budget `caller`, a receipt line per message),
quoted as data by the one quoting helper. A reply format goes to the provider as OpenAI's
`response_format` (the offline model builds a schema-valid object from its answer), is stated in the
same section for providers that do not enforce it, and the reply is validated against the schema
before it is stored or returned. Sampling settings reach the model within the operator's limits
(`ORRERY_CALLER_SAMPLING`, `ORRERY_CALLER_MAX_OUTPUT_TOKENS`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.settings import ModelSettings

from orrery.sections import ContextSection
from orrery.text import inline_data

TITLE = "The caller's instructions"
"""The section's title: what the application calling Orrery asked for, quoted as data."""


class StructuredOutputError(ValueError):
    """The model's reply does not match the format the caller asked for."""


@dataclass(frozen=True)
class OutputFormat:
    """A reply format: `json_schema` (with its schema, name and strictness) or `json_object`."""

    kind: Literal["json_schema", "json_object"]
    schema: dict[str, Any] | None = None
    name: str = "response"
    strict: bool = False

    def response_format(self) -> dict[str, Any]:
        """OpenAI's chat-completions `response_format` for this format."""
        if self.kind == "json_object":
            return {"type": "json_object"}
        spec = {"name": self.name, "schema": self.schema, "strict": self.strict}
        return {"type": "json_schema", "json_schema": spec}


@dataclass(frozen=True)
class CallerRequest:
    """A turn's caller options (each empty when not asked for)."""

    instructions: tuple[tuple[str, str], ...] = ()
    """`(role, text)` of each system/developer message or `instructions`, in order."""
    output: OutputFormat | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    """pydantic-ai model settings: `temperature`, `top_p`, `max_tokens`, `stop_sequences`, `seed`."""

    def __bool__(self) -> bool:
        return bool(self.instructions or self.output or self.settings)


def caller_section(caller: CallerRequest | None) -> ContextSection | None:
    """The caller's instructions (and the reply format it asked for) as a context section."""
    if not caller or not (caller.instructions or caller.output):
        return None
    items: list[tuple[str, str]] = []
    if caller.output is not None:
        items.append(("reply format", _format_line(caller.output)))
    for i, (role, text) in enumerate(caller.instructions, 1):
        items.append((f"{role} {i}", f"- {role}: {inline_data(text, keep_lines=True)}"))
    return ContextSection("caller", TITLE, items)


def _format_line(output: OutputFormat) -> str:
    """Orrery's own line about the reply's shape (the schema quoted as data)."""
    if output.kind == "json_object":
        return "Reply with one JSON object and nothing else."
    schema = inline_data(json.dumps(output.schema, separators=(",", ":")))
    return f"Reply with one JSON object and nothing else, matching this JSON schema: {schema}"


def model_settings(caller: CallerRequest | None) -> ModelSettings | None:
    """The run's model settings: the caller's sampling settings and its reply format (as the
    request body's `response_format`)."""
    if not caller or not (caller.settings or caller.output):
        return None
    settings: dict[str, Any] = dict(caller.settings)
    if caller.output is not None:
        settings["extra_body"] = {"response_format": caller.output.response_format()}
    return ModelSettings(**settings)  # type: ignore[typeddict-item,no-any-return]


def response_format_of(settings: ModelSettings | None) -> dict[str, Any] | None:
    """The `response_format` a run's model settings carry (what a model reads to shape its reply)."""
    extra = (settings or {}).get("extra_body")
    return extra.get("response_format") if isinstance(extra, dict) else None


def check_output(output: OutputFormat | None, reply: str) -> None:
    """Raise `StructuredOutputError` unless the reply is one JSON object matching the format."""
    if output is None:
        return
    try:
        value = json.loads(reply)
    except ValueError:
        raise StructuredOutputError("the model's reply is not JSON; the format asked for JSON") from None
    if not isinstance(value, dict):
        raise StructuredOutputError("the model's reply is not a JSON object")
    if output.schema is None:
        return
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    error = next(iter(Draft202012Validator(output.schema).iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the object"
        message = f"the model's reply does not match the schema {output.name!r} at {where}"
        raise StructuredOutputError(f"{message}: {error.message[:200]}")
