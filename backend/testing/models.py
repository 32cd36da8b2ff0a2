"""Mocked LLMs that read like the conversation they script, and remember what they were shown.

```python
model = ScriptedModel(
    on("retro", call=("project_pulse", {"detail": "tasks"}), say="Where we stand: {tool_result}"),
    otherwise="I only know my script.",
)
```

When the newest user message contains `"retro"` (case-insensitive; or matches a compiled regex, or
a predicate returns true) the model calls `project_pulse` with those arguments, then answers with
`say`, where `{tool_result}` is what the tool returned. Every request is recorded in `model.seen`:
the system prompt (instructions), the messages and the tools offered, so a test can assert on the
context the model was given. It streams too (the orchestrator streams every turn).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

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
ToolCall = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    """One line of the script: when the user says this, call these tools, then say that."""

    trigger: Trigger
    calls: tuple[ToolCall, ...]
    say: str

    def matches(self, text: str) -> bool:
        """Whether the user's message triggers this rule."""
        if isinstance(self.trigger, str):
            return self.trigger.lower() in text.lower()
        if isinstance(self.trigger, re.Pattern):
            return self.trigger.search(text) is not None
        return bool(self.trigger(text))


def on(trigger: Trigger, *, say: str, call: ToolCall | list[ToolCall] | None = None) -> Rule:
    """A script line: when the newest user message matches `trigger`, call `call`, then `say`."""
    calls = () if call is None else tuple(call) if isinstance(call, list) else (call,)
    return Rule(trigger, calls, say)


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
    """A pydantic-ai `FunctionModel` that plays a script and records what it was shown."""

    def __init__(self, *rules: Rule, otherwise: str = "(no scripted answer for this message)") -> None:
        self.rules = list(rules)
        self.otherwise = otherwise
        self.seen: list[Seen] = []
        super().__init__(self._respond, stream_function=self._stream)

    @property
    def last(self) -> Seen:
        """The newest request (fails clearly when the model was never called)."""
        assert self.seen, "the scripted model was never called"
        return self.seen[-1]

    @property
    def tools_called(self) -> list[str]:
        """Names of the tools this model called, in order."""
        return [
            part.tool_name
            for seen in self.seen
            for message in seen.messages
            if isinstance(message, ModelResponse)
            for part in message.parts
            if isinstance(part, ToolCallPart)
        ]

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(
            Seen(
                instructions=info.instructions,
                messages=list(messages),
                tools=[t.name for t in info.function_tools],
                tool_schemas={t.name: t.parameters_json_schema for t in info.function_tools},
            )
        )
        text = _latest_user_text(messages)
        rule = next((r for r in self.rules if r.matches(text)), None)
        last = messages[-1].parts if messages else []
        answered = [p for p in last if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if rule is None:
            return ModelResponse(parts=[TextPart(self.otherwise)])
        if answered or not rule.calls:
            results = [
                p.model_response_str() if isinstance(p, ToolReturnPart) else p.model_response()
                for p in answered
            ]
            return ModelResponse(parts=[TextPart(rule.say.replace("{tool_result}", "\n".join(results)))])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in rule.calls])

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
