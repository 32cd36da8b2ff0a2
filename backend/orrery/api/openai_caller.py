"""An OpenAI-door request's caller options (`agents.caller.CallerRequest`): the system/developer
messages and `instructions`, the reply format (`response_format` on chat completions, `text.format`
on Responses) and the sampling settings, within the operator's limits (`caller_sampling`,
`caller_max_output_tokens`). A malformed format is a 400 naming its parameter, before any turn."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, StrictInt

from orrery.agents.caller import CallerRequest, OutputFormat
from orrery.config import Settings
from orrery.errors import ValidationError

INSTRUCTION_ROLES = ("system", "developer")


class Sampling(BaseModel):
    """The sampling settings both doors read (each passed to the model when given)."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    seed: StrictInt | None = None


class BadFormat(ValidationError):
    """A reply format that is not one Orrery can ask for (names the parameter)."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


def output_format(value: dict[str, Any] | None, param: str, *, nested: bool) -> OutputFormat | None:
    """The reply format of `response_format` (`nested`: the schema under `json_schema`, as chat
    completions send it) or of `text.format` (flat, as Responses send it); None for plain text."""
    if value is None or value.get("type") in (None, "text"):
        return None
    if value.get("type") == "json_object":
        return OutputFormat("json_object")
    if value.get("type") != "json_schema":
        raise BadFormat(param, f"{param}.type must be text, json_object or json_schema")
    spec = value.get("json_schema") if nested else value
    where = f"{param}.json_schema" if nested else param
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
        raise BadFormat(where, f"{where} needs a `schema` object")
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        Draft202012Validator.check_schema(spec["schema"])
    except SchemaError as exc:
        raise BadFormat(where, f"{where}.schema is not a valid JSON schema: {exc.message[:200]}") from None
    name = spec["name"] if isinstance(spec.get("name"), str) else "response"
    return OutputFormat("json_schema", spec["schema"], name, spec.get("strict") is True)


def model_settings_of(
    sampling: Sampling, max_tokens: int | None, stop: str | list[str] | None, settings: Settings
) -> dict[str, Any]:
    """pydantic-ai model settings within the operator's limits: `max_tokens` lowered to
    `caller_max_output_tokens`; the rest only when `caller_sampling` is on."""
    out: dict[str, Any] = {}
    if max_tokens is not None:
        out["max_tokens"] = min(max_tokens, settings.caller_max_output_tokens)
    if settings.caller_sampling:
        out |= {k: v for k, v in sampling.model_dump().items() if v is not None}
        if stop:
            out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    return out


def caller_request(
    instructions: list[tuple[str, str]],
    output: OutputFormat | None,
    model_settings: dict[str, Any],
) -> CallerRequest | None:
    """The turn's caller options, or None when the caller asked for nothing."""
    kept = tuple((role, text) for role, text in instructions if text.strip())
    caller = CallerRequest(kept, output, model_settings)
    return caller if caller else None


def completion_caller(body: Any, settings: Settings) -> CallerRequest | None:
    """A chat-completions request's caller options (`CompletionRequest`)."""
    said = [(m.role, m.text()) for m in body.messages if m.role in INSTRUCTION_ROLES]
    output = output_format(body.response_format, "response_format", nested=True)
    limit = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
    sampling = Sampling(temperature=body.temperature, top_p=body.top_p, seed=body.seed)
    return caller_request(said, output, model_settings_of(sampling, limit, body.stop, settings))


def responses_caller(body: Any, settings: Settings) -> CallerRequest | None:
    """A Responses request's caller options (`ResponsesRequest`): `instructions` first, then the
    system/developer messages of `input`."""
    said = [("instructions", body.instructions)] if body.instructions else []
    said += [(m.role, m.text()) for m in body.messages() if m.role in INSTRUCTION_ROLES]
    output = output_format(body.text.format if body.text else None, "text.format", nested=False)
    sampling = Sampling(temperature=body.temperature, top_p=body.top_p)
    return caller_request(said, output, model_settings_of(sampling, body.max_output_tokens, None, settings))
