"""The caller's function tools on the OpenAI doors (issue 50): `tools` and `tool_choice` read into
`ClientTools`, in chat-completions shape (`{"type": "function", "function": {...}}`) or Responses
shape (`{"type": "function", "name": ...}`), and the results the caller sends back: `role: "tool"`
messages after the last assistant message, or `function_call_output` items. Tools of any other type
(a hosted `web_search`, ...) are refused with a 400 naming them; Orrery runs its own."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from orrery.agents.client_tools import ClientTools, tool_definition
from orrery.agents.client_turn import waiting_on
from orrery.errors import ValidationError


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    if tool.get("type") != "function":
        raise ValidationError(f"tools: only function tools are served, not {tool.get('type')!r}")
    spec = tool.get("function", tool)  # chat completions nest it; Responses do not
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        raise ValidationError("tools: every function needs a name")
    return spec


def _choice(choice: str | dict[str, Any] | None) -> str:
    """`auto` / `none` / `required`, or the name a `{"type": "function", ...}` choice names."""
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise ValidationError(f"tool_choice: {choice!r} is not auto, none or required")
        return choice
    name = (choice.get("function") or {}).get("name") if "function" in choice else choice.get("name")
    if choice.get("type") != "function" or not isinstance(name, str):
        raise ValidationError("tool_choice: a function choice names one function")
    return name


def client_tools(
    tools: list[dict[str, Any]] | None, choice: str | dict[str, Any] | None, results: dict[str, str]
) -> ClientTools | None:
    """The request's client tools, or None when it sent none and returns no results."""
    if not tools and not results:
        return None
    specs = [_function(t) for t in tools or []]
    definitions = tuple(tool_definition(s["name"], s.get("description"), s.get("parameters")) for s in specs)
    return ClientTools(definitions, _choice(choice) if specs else "auto", results)


def output_text(content: Any) -> str:
    """A tool result as text: a string as is, text parts joined, anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    return json.dumps(content)


def chat_results(messages: list[Any]) -> dict[str, str]:
    """The `role: "tool"` messages after the conversation's last assistant message, by call id."""
    results: dict[str, str] = {}
    for message in reversed(messages):
        if message.role != "tool":
            break
        if not message.tool_call_id:
            raise ValidationError("messages: a tool message needs its tool_call_id")
        results[message.tool_call_id] = output_text(message.content)
    return dict(reversed(list(results.items())))


def chat_tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pending calls as a chat-completions message's `tool_calls`."""
    return [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in calls
    ]


async def turn_events(
    orchestrator: Any,
    user_id: Any,
    sid: Any,
    text: str,
    agent: str | None,
    key: str | None,
    client: ClientTools | None,
    caller: Any = None,
    **turn: Any,
) -> AsyncIterator[Any]:
    """The turn's events: a plain turn; a resumed one when the request carries tool results; a
    turn with the caller's tools, or the pending calls again when it repeats the request that
    suspended the turn (nothing runs twice). `caller`: the application's instructions, reply format
    and sampling settings (`agents.caller`); `turn`: the rest of `Orchestrator.turn`'s options (a
    reply id, a branch to take before the message is stored)."""
    if client is None:
        return orchestrator.turn(  # type: ignore[no-any-return]
            user_id, sid, text, agent=agent, client_key=key, resend=True, caller=caller, **turn
        )
    if client.results:
        return orchestrator.resume(user_id, sid, client)  # type: ignore[no-any-return]
    replay = await waiting_on(orchestrator, user_id, sid, text)
    if replay is not None:
        return _once(replay)
    return orchestrator.turn(  # type: ignore[no-any-return]
        user_id, sid, text, agent=agent, client_key=key, resend=True, client=client, caller=caller, **turn
    )


async def _once(event: Any) -> AsyncIterator[Any]:
    yield event
