"""Mocked LLMs that read like the conversation they script, and remember what they were shown.

```python
model = ScriptedModel(
    on("retro", call=("project_pulse", {"detail": "tasks"}), say="Where we stand: {tool_result}"),
    on("entry", call=("get_entry", {"code": "{code}"}), say="Found it: {tool_result}"),
    otherwise="I only know my script.",
)
model.values["code"] = entry.code  # a fixture's value, known only once the test runs
```

When the newest user message contains `"retro"` (case-insensitive; or matches a compiled regex, or
a predicate returns true) the model calls `project_pulse` with those arguments, then answers with
`say`, where `{tool_result}` is what the tool returned.

Values that only exist once a test runs (a fixture's id or code) fill `{name}` placeholders in `say`
and in the arguments' strings, looked up in `model.values` (or `ScriptedModel(..., values={...})`)
when the model is asked, not when the script is written; an argument that is exactly `"{name}"` takes
the value itself (an int stays an int). For anything else, `say` and the arguments may be callables
that receive the request as a `Seen` (`user_text`, `tool_results`, ...) and return the text or the
arguments dict.

Every request is recorded in `model.seen`: the system prompt (instructions), the messages and the
tools offered, so a test can assert on the context the model was given; every tool call the model
makes is in `model.tool_calls` as `Called(name, args)` (equal to a `(name, args)` tuple), its names
in `model.tools_called`. It streams too (the orchestrator streams every turn).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

Trigger = str | re.Pattern[str] | Callable[[str], bool]
Args = dict[str, Any] | Callable[["Seen"], dict[str, Any]]
"""A tool call's arguments: a dict (its strings may hold `{name}` placeholders), or a callable of
the request that returns them."""
ToolCall = tuple[str, Args]
Say = str | Callable[["Seen"], str]
"""A reply: text with `{tool_result}` and `{name}` placeholders, or a callable of the request."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JSON_NATIVE = (bool, int, float, list, dict, type(None))


class Called(NamedTuple):
    """A tool call the scripted model made; equal to the tuple `(name, args)`."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """One line of the script: when the user says this, call these tools, then say that."""

    trigger: Trigger
    calls: tuple[ToolCall, ...]
    say: Say

    def matches(self, text: str) -> bool:
        """Whether the user's message triggers this rule."""
        if isinstance(self.trigger, str):
            return self.trigger.lower() in text.lower()
        if isinstance(self.trigger, re.Pattern):
            return self.trigger.search(text) is not None
        return bool(self.trigger(text))

    def tool_calls(self, seen: Seen, values: dict[str, Any]) -> list[Called]:
        """This rule's calls for this request, placeholders filled (callables are called)."""
        return [
            Called(name, args(seen) if callable(args) else _fill(args, values)) for name, args in self.calls
        ]

    def reply(self, seen: Seen, values: dict[str, Any]) -> str:
        """The answer once the tools (if any) returned; `{tool_result}` is their output, joined."""
        return _reply(self.say, seen, values)


def on(trigger: Trigger, *, say: Say, call: ToolCall | list[ToolCall] | None = None) -> Rule:
    """A script line: when the newest user message matches `trigger`, call `call`, then `say`.

    `call` is `(tool_name, args)` or a list of them (called in one step); `args` and `say` may hold
    `{name}` placeholders filled from `model.values` when the model is asked, or be callables that
    receive the request (`Seen`)."""
    calls = () if call is None else tuple(call) if isinstance(call, list) else (call,)
    return Rule(trigger, calls, say)


def _reply(say: Say, seen: Seen, values: dict[str, Any]) -> str:
    if callable(say):
        return say(seen)
    return str(_fill(say, {**values, "tool_result": "\n".join(seen.tool_results)}))


def _fill(value: Any, values: dict[str, Any]) -> Any:
    """`value` with `{name}` placeholders replaced from `values`, inside dicts and lists too; a
    string that is exactly one placeholder takes the value itself when JSON has its type."""
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fill(v, values) for v in value]
    if not isinstance(value, str):
        return value
    whole = _PLACEHOLDER.fullmatch(value)
    if whole and isinstance(values.get(whole[1], ""), _JSON_NATIVE):
        return _value(values, whole[1])
    return _PLACEHOLDER.sub(lambda m: str(_value(values, m[1])), value)


def _value(values: dict[str, Any], name: str) -> Any:
    if name not in values:
        known = ", ".join(sorted(values)) or "none"
        raise LookupError(
            f"ScriptedModel: no value for {{{name}}}; set model.values[{name!r}] (known: {known})"
        )
    return values[name]


@dataclass
class Seen:
    """One model request as the model received it."""

    instructions: str | None
    messages: list[ModelMessage]
    tools: list[str]
    tool_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def user_text(self) -> str:
        """The newest user message."""
        return _latest_user_text(self.messages)

    @property
    def tool_results(self) -> list[str]:
        """What the tools returned to this request (empty unless the model just called some)."""
        last = self.messages[-1].parts if self.messages else []
        return [_result_text(p) for p in last if isinstance(p, ToolReturnPart | RetryPromptPart)]

    @property
    def history_texts(self) -> list[str]:
        """Every earlier user and assistant text, oldest first (what scoping let through)."""
        out = [text for message in self.messages for part in message.parts if (text := _text_of(part))]
        return out[:-1] if out and out[-1] == self.user_text else out


def _latest_user_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


class ScriptedModel(FunctionModel):
    """A pydantic-ai `FunctionModel` that plays a script and records what it was shown and did.

    `rules` are tried in order (first match wins); `otherwise` answers anything unmatched; `values`
    fill the rules' `{name}` placeholders (also settable later: `model.values["code"] = ...`)."""

    def __init__(
        self,
        *rules: Rule,
        otherwise: Say = "(no scripted answer for this message)",
        values: dict[str, Any] | None = None,
    ) -> None:
        self.rules = list(rules)
        self.otherwise = otherwise
        self.values: dict[str, Any] = dict(values or {})
        self.seen: list[Seen] = []
        self.tool_calls: list[Called] = []
        """Every tool call this model made, in order, with its arguments."""
        super().__init__(self._respond, stream_function=self._stream)

    @property
    def last(self) -> Seen:
        """The newest request (fails clearly when the model was never called)."""
        assert self.seen, "the scripted model was never called"
        return self.seen[-1]

    @property
    def tools_called(self) -> list[str]:
        """Names of the tools this model called, in order (`tool_calls` has their arguments)."""
        return [call.name for call in self.tool_calls]

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen = Seen(
            instructions=info.instructions,
            messages=list(messages),
            tools=[t.name for t in info.function_tools],
            tool_schemas={t.name: t.parameters_json_schema for t in info.function_tools},
        )
        self.seen.append(seen)
        rule = next((r for r in self.rules if r.matches(seen.user_text)), None)
        if rule is None:
            return ModelResponse(parts=[TextPart(_reply(self.otherwise, seen, self.values))])
        if seen.tool_results or not rule.calls:
            return ModelResponse(parts=[TextPart(rule.reply(seen, self.values))])
        calls = rule.tool_calls(seen, self.values)
        self.tool_calls.extend(calls)
        return ModelResponse(parts=[ToolCallPart(call.name, call.args) for call in calls])

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = self._respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args)
                yield {
                    index: DeltaToolCall(name=part.tool_name, json_args=args, tool_call_id=part.tool_call_id)
                }


def _result_text(part: ToolReturnPart | RetryPromptPart) -> str:
    return part.model_response_str() if isinstance(part, ToolReturnPart) else part.model_response()


def _text_of(part: Any) -> str | None:
    if isinstance(part, TextPart):
        return part.content
    if isinstance(part, UserPromptPart) and isinstance(part.content, str):
        return part.content
    return None
