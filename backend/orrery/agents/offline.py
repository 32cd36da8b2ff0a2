"""The `offline` model: deterministic, needs no API key, honest about being offline, and still uses
tools the way a real model would for the README's suggested questions.

- "What plan/goal does this belong to?" -> answered from the Linked Entities section in the prompt.
- Relationship and focus questions (linked, depends, blocks; "what's blocking this?", "how far along
  is it?", "what's next?") on a focused chat -> `get_linked_entities`, then a direction- and
  state-aware answer (blockers that are not done, progress as done of total, the next open item
  that waits on nothing; `offline_answers`).
- Knowledge questions ("How does overage billing work?") from a domain agent -> the best entry of the
  auto-loaded Context Packet, else `load_context_for_task`; then `get_entry` for that entry, and the
  answer quotes its description.
- "Load context for the seat minimum rule" (also "get context on ...") at any point of a chat ->
  `load_context_for_task` with the message, then `get_entry` for its best entry.
- A vague question with a low-confidence packet ("What about the seat thing?") -> it asks which of
  the loosely related entries is meant.
- Nothing relevant (no packet match, a motivator's message) -> it says so plainly.
- "Remember that ..." / "Forget that ..." -> `remember_fact` / `forget_fact` (`offline_facts`).
- Structured output (the background pattern analyst) -> empty, so nothing is invented offline.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai._instrumentation import get_instructions
from pydantic_ai._utils import estimate_string_tokens
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
    FunctionStreamedResponse,
)
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from orrery.agents.offline_answers import (
    answer_entry,
    answer_links,
    best_code,
    candidates,
    focus_question,
    packet_codes,
    parse_links,
)
from orrery.agents.offline_facts import fact_step
from orrery.graph.linked_format import parse_abbreviated_line
from orrery.knowledge.message_intent import asks_about_focus, asks_for_knowledge, is_link_question
from orrery.knowledge.search import query_codes
from orrery.text import search_terms

NOTICE = (
    "(Offline model: answers come only from Orrery's context and tools; set ORRERY_MODEL for a real LLM.)"
)
RELATION_WORDS = (
    "linked",
    "link",
    "links",
    "depend",
    "depends",
    "block",
    "blocks",
    "blocked",
    "blocking",
    "blockers",
    "related",
    "relationship",
    "relationships",
    "connected",
    "waiting",
    "support",
    "supports",
    "dependents",
)
DOMAIN_AGENTS = ("coach", "planner", "goal architect")
_FOCUS = re.compile(
    r"You are focused on the (task|plan|goal|milestone|document|output) \*\*(.+?)\*\* \[([0-9a-f-]{36})\]"
)
_FOCUS_STATE = re.compile(r"^- \*\*State:\*\* (\S+)", re.M)
_ASKS_GROUP = re.compile(r"\b(?:what|which)\s+(plan|plans|goal|goals|milestone|milestones)\b", re.I)
_LOAD_REQUEST = re.compile(r"\b(?:load|get|pull)\s+(?:the\s+|some\s+)?(?:kb\s+)?context\b", re.I)
"""An explicit request to load knowledge ("Load context for the seat minimum rule"; seed 000's skill
triggers): `load_context_for_task` runs, even when the session already holds a packet."""


def _latest(messages: list[ModelMessage]) -> tuple[str, list[ToolReturnPart], str]:
    """The latest user text, the tool returns since it (in order), and the instructions."""
    instructions, user = "", ""
    returned: list[ToolReturnPart] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            instructions = message.instructions or instructions
            for part in message.parts:
                if part.part_kind == "user-prompt" and isinstance(part.content, str):
                    user, returned = part.content, []
                elif isinstance(part, ToolReturnPart):
                    returned.append(part)
    return user, returned, instructions


def _section_items(instructions: str, title: str) -> list[tuple[str, str, str]]:
    """`(name, state, relation)` lines under `### <title> (` in the Linked Entities section."""
    block = re.search(rf"^### {title} \(.*?\)\n(.*?)(?=^### |^_Use|\Z)", instructions, re.M | re.S)
    if not block:
        return []
    return [item for line in block.group(1).splitlines() if (item := parse_abbreviated_line(line))]


def _from_context(user: str, instructions: str) -> str | None:
    asked = _ASKS_GROUP.search(user)
    focus = _FOCUS.search(instructions)
    if not asked or not focus:
        return None
    group = asked.group(1).lower().rstrip("s") + "s"
    items = _section_items(instructions, group.capitalize())
    kind, name = focus.group(1), focus.group(2)
    if not items:
        return None  # the section may be cut: ask the tool instead of claiming there are none
    listed = "\n".join(f"- **{n}** ({state}, {relation})" for n, state, relation in items)
    return f"{NOTICE}\n\nThe {kind} **{name}** is linked to these {group}:\n\n{listed}"


def _text(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(f"{NOTICE}\n\n{text}")])


def _call(tool: str, args: dict[str, object]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def _subject(instructions: str) -> str:
    focus = _FOCUS.search(instructions)
    return f"the {focus.group(1)} **{focus.group(2)}**" if focus else "this entity"


def _focus_state(instructions: str) -> str | None:
    """The focused entity's state, from the Current Focus section (the line after the focus)."""
    focus = _FOCUS.search(instructions)
    state = _FOCUS_STATE.search(instructions, focus.end()) if focus else None
    return state.group(1) if state else None


def _after_tools(
    user: str, returned: list[ToolReturnPart], instructions: str, tools: set[str]
) -> ModelResponse:
    last = returned[-1]
    content = last.model_response_str()
    packet = next(
        (r.model_response_str() for r in returned if r.tool_name == "load_context_for_task"),
        instructions if "## Context Loaded" in instructions else None,
    )
    if last.tool_name == "get_linked_entities":
        links = parse_links(content)
        return _text(answer_links(user, _subject(instructions), links, _focus_state(instructions)))
    if last.tool_name == "get_entry":
        return _text(answer_entry(content, packet))
    if last.tool_name == "search_knowledge":
        options = [f"- **{code}:** {name.split(' (')[0]}" for code, name in packet_codes(content)][:4]
        if options:
            return _text("I am not sure which one you mean. Is it one of these?\n\n" + "\n".join(options))
    if last.tool_name == "load_context_for_task":
        code = best_code(user, content)
        if code and "get_entry" in tools:
            return _call("get_entry", {"code": code})
        return _text(
            "I found nothing relevant in the project's knowledge base for this. If you explain how it "
            "works here, I can record it as knowledge."
        )
    return _text(f"Here is what `{last.tool_name}` found:\n\n{content[:2500]}")


def _is_vague_question(user: str) -> bool:
    """A short question naming no entry ("What about the seat thing?"): worth a search and a
    "which one?" rather than a guess; statements and long requests are not."""
    return user.strip().endswith("?") and 0 < len(search_terms(user)) <= 4


def _decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    user, returned, instructions = _latest(messages)
    tools = {t.name for t in info.function_tools}
    if info.output_tools:  # structured output (e.g. the pattern analyst): offline finds nothing new
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {})])
    step = fact_step(messages, user, instructions, tools)
    if step is not None:
        return _call(step.tool, step.args) if step.tool else _text(step.text)
    if returned:
        return _after_tools(user, returned, instructions, tools)
    answer = _from_context(user, instructions)
    if answer:
        return ModelResponse(parts=[TextPart(answer)])
    focus = _FOCUS.search(instructions)
    words = set(re.findall(r"[a-z]+", user.lower()))
    about_links = (
        words & set(RELATION_WORDS)
        or _ASKS_GROUP.search(user)
        or asks_about_focus(user)
        or (is_link_question(user) and focus_question(user))  # "How is this plan going?"
    )
    if focus and "get_linked_entities" in tools and about_links:
        return _call("get_linked_entities", {"entity_id": focus.group(3), "entity_kind": focus.group(1)})
    domain_agent = any(f"You are the **{name}**" in instructions for name in DOMAIN_AGENTS)
    if domain_agent and _LOAD_REQUEST.search(user) and "load_context_for_task" in tools:
        return _call("load_context_for_task", {"task_description": user})
    if domain_agent and (asks_for_knowledge(user) or query_codes(user)):
        codes = query_codes(user)
        known = codes[0] if codes else best_code(user, instructions)
        if known and "get_entry" in tools:
            return _call("get_entry", {"code": known})
        if "load_context_for_task" in tools:
            return _call("load_context_for_task", {"task_description": user})
    if domain_agent and "**Confidence:** Low" in instructions:
        options = candidates(user, instructions)
        if options:  # ambiguous: ask which one is meant
            return _text("I am not sure which one you mean. Is it one of these?\n\n" + "\n".join(options))
    if domain_agent and _is_vague_question(user) and "search_knowledge" in tools:
        return _call("search_knowledge", {"query": user})  # then: "is it one of these?"
    about = f" about the {focus.group(1)} **{focus.group(2)}**" if focus else ""
    return _text(
        f"I read your message{about}, but nothing in Orrery's context or tools answers it, and offline "
        "I cannot reason beyond that. With a real model configured I would; offline, ask me about this "
        "entity's links (what blocks it, what it belongs to) or how something works in the project."
    )


def _pieces(response: ModelResponse) -> list[str | DeltaToolCalls]:
    """The response as a stream's items: a text part word by word, a tool call whole."""
    items: list[str | DeltaToolCalls] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            items += re.findall(r"\S+\s*", part.content)
        elif isinstance(part, ToolCallPart):
            items.append(
                {0: DeltaToolCall(name=part.tool_name, json_args=json.dumps(part.args), tool_call_id=None)}
            )
    return items


async def _replay(items: list[str | DeltaToolCalls]) -> AsyncIterator[str | DeltaToolCalls]:
    """The items one per turn of the event loop, as a provider's chunks arrive (and as the
    peekable stream's checkpoints had them), so a turn's stream keeps its shape under load."""
    for i, item in enumerate(items):
        if i:
            await asyncio.sleep(0)
        yield item


class OfflineModel(FunctionModel):
    """`FunctionModel` over `_decide`, whose stream is decided before it opens: the same items,
    events and usage as `FunctionModel`'s stream, without the peekable wrapper that takes a lock
    and a cancel scope for each of a reply's ~50 words (over half of the offline model's CPU)."""

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        model_settings, model_request_parameters = self.prepare_request(
            model_settings, model_request_parameters
        )
        info = AgentInfo(
            function_tools=model_request_parameters.declared_function_tools,
            allow_text_output=model_request_parameters.allow_text_output,
            output_tools=model_request_parameters.output_tools,
            model_settings=model_settings,
            model_request_parameters=model_request_parameters,
            instructions=get_instructions(messages, model_request_parameters),
        )
        items = _pieces(_decide(messages, info))
        if not items:
            raise ValueError("Stream function must return at least one item")
        yield _OfflineStream(
            model_request_parameters=model_request_parameters,
            _model_name=self.model_name,
            _iter=_replay(items),
        )


@dataclass
class _OfflineStream(FunctionStreamedResponse):
    """`FunctionStreamedResponse` with a text item's tokens added up as a number and put in the
    usage once at the end (the same total): adding a `RequestUsage` copies it, once per word."""

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        tokens = 0
        async for item in self._iter:
            if isinstance(item, str):
                tokens += estimate_string_tokens(item) if item else 0
                for event in self._parts_manager.handle_text_delta(vendor_part_id="content", content=item):
                    yield event
            else:
                for event in self._map_item(item):
                    yield event
        self._usage += RequestUsage(output_tokens=tokens)


def offline_model() -> FunctionModel:
    """The deterministic offline model (a pydantic-ai FunctionModel with streaming)."""
    return OfflineModel(_decide, model_name="offline")
