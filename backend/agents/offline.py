"""The `offline` model: deterministic, needs no API key, honest about being offline, and still uses
tools the way a real model would for common requests.

- "What plan/goal does this belong to?" -> answered from the Linked Entities section in the prompt.
- Relationship questions (linked, depends, blocks, ...) on a focused chat -> `get_linked_entities`.
- Questions matching lines of a loaded Context Packet -> answered from those lines; other questions
  with searchable words -> `load_context_for_task`.
- After a tool call -> a short answer quoting what the tool returned.
- Structured output (the background pattern analyst) -> empty, so nothing is invented offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from backend.text import search_terms

NOTICE = (
    "(Offline model: answers come only from Orrery's context and tools; set ORRERY_MODEL for a real LLM.)"
)
RELATION_WORDS = (
    "linked",
    "link",
    "depend",
    "depends",
    "block",
    "blocks",
    "blocked",
    "blocking",
    "related",
    "relationship",
    "relationships",
    "connected",
    "waiting",
)
_FOCUS = re.compile(
    r"You are focused on the (task|plan|goal|milestone|document|output) \*\*(.+?)\*\* \[([0-9a-f-]{36})\]"
)
_ASKS_GROUP = re.compile(r"\b(?:what|which)\s+(plan|plans|goal|goals|milestone|milestones)\b", re.I)
_LINE = re.compile(r"^- \*\*(.+?)\*\* \[[0-9a-f-]{36}\] \((.+?)\) - (.+)$")


def _latest(messages: list[ModelMessage]) -> tuple[str, ToolReturnPart | None, str]:
    """The latest user text, a tool return if the last request answers a tool call, and the instructions."""
    instructions, user, returned = "", "", None
    for message in messages:
        if isinstance(message, ModelRequest):
            instructions = message.instructions or instructions
            for part in message.parts:
                if part.part_kind == "user-prompt" and isinstance(part.content, str):
                    user, returned = part.content, None
                elif isinstance(part, ToolReturnPart):
                    returned = part
    return user, returned, instructions


def _section_items(instructions: str, title: str) -> list[tuple[str, str, str]]:
    """`(name, state, relation)` lines under `### <title> (` in the Linked Entities section."""
    block = re.search(rf"^### {title} \(.*?\)\n(.*?)(?=^### |^_Use|\Z)", instructions, re.M | re.S)
    if not block:
        return []
    return [m.groups() for line in block.group(1).splitlines() if (m := _LINE.match(line.strip()))]  # type: ignore[misc]


def _from_context(user: str, instructions: str) -> str | None:
    asked = _ASKS_GROUP.search(user)
    focus = _FOCUS.search(instructions)
    if not asked or not focus:
        return None
    group = asked.group(1).lower().rstrip("s") + "s"
    items = _section_items(instructions, group.capitalize())
    kind, name = focus.group(1), focus.group(2)
    if not items:
        return f"{NOTICE}\n\nThe {kind} **{name}** has no linked {group} in its context."
    listed = "; ".join(f"**{n}** ({state}, {relation})" for n, state, relation in items)
    return f"{NOTICE}\n\nThe {kind} **{name}** is linked to these {group}: {listed}."


def _condense(content: str, limit: int = 2500) -> str:
    """Headings, states and relationships of a tool result; descriptions and types are dropped."""
    keep = [
        line
        for line in content.splitlines()
        if line.startswith("#")
        or line.startswith(("- **State:**", "- **Relationship:**", "- **"))
        and not line.startswith(("- **Type:**", "- **Description:**"))
    ]
    text = "\n".join(keep) if keep else content
    return text if len(text) <= limit else text[:limit].rsplit("\n", 1)[0] + "\n…"


def _packet_lines(instructions: str, user: str) -> list[str]:
    """Lines of a loaded Context Packet that share a word with the question."""
    if "## Context Loaded" not in instructions:
        return []
    words = {w[:5] for w in search_terms(user) if len(w) > 3}
    lines = re.findall(r"^- \*\*[A-Z]{1,6}-\d+:\*\* .+$", instructions, re.M)
    return [line for line in lines if words & {w[:5] for w in search_terms(line)}]


def _decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    user, returned, instructions = _latest(messages)
    tools = {t.name for t in info.function_tools}
    if info.output_tools:  # structured output (e.g. the pattern analyst): offline finds nothing new
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {})])
    if returned is not None:
        content = _condense(returned.model_response_str())
        return ModelResponse(
            parts=[TextPart(f"{NOTICE}\n\nHere is what `{returned.tool_name}` found:\n\n{content}")]
        )
    answer = _from_context(user, instructions)
    if answer:
        return ModelResponse(parts=[TextPart(answer)])
    focus = _FOCUS.search(instructions)
    words = set(re.findall(r"[a-z]+", user.lower()))
    if focus and "get_linked_entities" in tools and words & set(RELATION_WORDS):
        args = {"entity_id": focus.group(3), "entity_kind": focus.group(1)}
        return ModelResponse(parts=[ToolCallPart("get_linked_entities", args)])
    known = _packet_lines(instructions, user)
    if known:
        return ModelResponse(
            parts=[TextPart(f"{NOTICE}\n\nFrom the team's knowledge base:\n" + "\n".join(known))]
        )
    domain_agent = any(
        f"You are the **{name}**" in instructions for name in ("coach", "planner", "goal architect")
    )
    if "load_context_for_task" in tools and domain_agent and len(search_terms(user)) >= 2:
        return ModelResponse(parts=[ToolCallPart("load_context_for_task", {"task_description": user})])
    about = f" about the {focus.group(1)} **{focus.group(2)}**" if focus else ""
    return ModelResponse(
        parts=[
            TextPart(
                f"{NOTICE}\n\nI read your message{about}. With a real model configured I would "
                "reason about it; offline, I can show relationships, load domain knowledge and answer "
                "from the context."
            )
        ]
    )


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    response = _decide(messages, info)
    for part in response.parts:
        if isinstance(part, TextPart):
            for piece in re.findall(r"\S+\s*", part.content):
                yield piece
        elif isinstance(part, ToolCallPart):
            yield {0: DeltaToolCall(name=part.tool_name, json_args=json.dumps(part.args), tool_call_id=None)}


def offline_model() -> FunctionModel:
    """The deterministic offline model (a pydantic-ai FunctionModel with streaming)."""
    return FunctionModel(_decide, stream_function=_stream, model_name="offline")
