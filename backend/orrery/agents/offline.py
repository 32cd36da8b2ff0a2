"""The `offline` model: deterministic, needs no API key, and still uses tools the way a real model
would for the README's and the demo's questions (the frozen set of `orrery eval offline`). Its
replies carry no disclaimer: the doors say once per chat that it is offline (`NOTICE`).

- A greeting gets a greeting back, by name (`offline_knowledge`).
- A story id ("Show me the story context for US-004") -> `get_context_for_story`; a tool's refusal
  or error JSON is said as a sentence, never shown raw.
- An entity named in the question ("When is the legal review due, and what does it block?"), or
  the focus's own when / who / state -> `find_entities`, then `get_linked_entities` when a link is
  asked; the answer gives each asked aspect from its fields and links (`offline_entities`). With no
  focus and no name, "What should I work on next?" -> the project's ready tasks.
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
- A packet's confidence is followed as the prompt says: high opens with its receipt, medium asks
  whether more context is needed, low ("What about the seat thing?") asks which of the loosely
  related entries is meant or offers capture, none (an empty knowledge base) offers capture. A
  loaded packet answers a statement too ("Update the usage overage billing rule...").
- Nothing relevant (no packet match, a motivator's message) -> it says so plainly.
- "Remember that ..." / "Forget that ..." -> `remember_fact` / `forget_fact` (`offline_facts`).
- "Search my earlier chats for ..." -> `search_memory`, then the excerpts it found (`offline_search`).
- After a capture offer, an explanation and a "yes" -> `create_entry` (`offline_capture`).
- Structured output (the background pattern analyst) -> empty, so nothing is invented offline.
"""

from __future__ import annotations

import re

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import (
    AgentInfo,
    FunctionModel,
)

from orrery.agents.offline_answers import (
    answer_entry,
    answer_links,
    best_code,
    focus_question,
    packet_codes,
    parse_links,
)
from orrery.agents.offline_capture import capture_step
from orrery.agents.offline_client import client_step
from orrery.agents.offline_entities import (
    answer_entity,
    answer_ready,
    aspects,
    named_terms,
    needs_links,
    parse_items,
)
from orrery.agents.offline_facts import fact_step
from orrery.agents.offline_knowledge import after_entry, after_packet, from_packet, greeting, tool_error
from orrery.agents.offline_search import search_step
from orrery.agents.offline_stream import OfflineModel
from orrery.agents.offline_structured import shaped
from orrery.graph.linked_format import parse_abbreviated_line
from orrery.knowledge.message_intent import asks_about_focus, asks_for_knowledge, is_link_question
from orrery.knowledge.search import query_codes
from orrery.text import search_terms

NOTICE = "Offline model: answers come only from Orrery's context and tools; set ORRERY_MODEL for a real LLM."
"""Said once per chat by the doors (the web chat's notice, the terminal chat's first line, the
OpenAI door's model descriptions), never stored in a reply, so excerpts and search stay clean."""
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
DOMAIN_AGENTS = ("coach", "planner", "goal architect", "accountability partner")
_FOCUS = re.compile(
    r"You are focused on the (task|plan|goal|milestone|document|output) \*\*(.+?)\*\* \[([0-9a-f-]{36})\]"
)
_FOCUS_STATE = re.compile(r"^- \*\*State:\*\* (\S+)", re.M)
_ASKS_GROUP = re.compile(r"\b(?:what|which)\s+(plan|plans|goal|goals|milestone|milestones)\b", re.I)
_LOAD_REQUEST = re.compile(r"\b(?:load|get|pull)\s+(?:the\s+|some\s+)?(?:kb\s+)?context\b", re.I)
"""An explicit request to load knowledge ("Load context for the seat minimum rule"; seed 000's skill
triggers): `load_context_for_task` runs, even when the session already holds a packet."""


Returned = ToolReturnPart | RetryPromptPart
"""A tool's answer, or its refusal (a `ModelRetry`: the tool's error message)."""


def _latest(messages: list[ModelMessage]) -> tuple[str, list[Returned], str]:
    """The latest user text, the tool returns and refusals since it (in order), and the instructions."""
    instructions, user = "", ""
    returned: list[Returned] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            instructions = message.instructions or instructions
            for part in message.parts:
                if part.part_kind == "user-prompt" and isinstance(part.content, str):
                    user, returned = part.content, []
                elif isinstance(part, ToolReturnPart) or (
                    isinstance(part, RetryPromptPart) and part.tool_name
                ):
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
    return f"The {kind} **{name}** is linked to these {group}:\n\n{listed}"


def _text(text: str) -> ModelResponse:
    """A reply. It carries no disclaimer: the doors say once per chat that the model is offline."""
    return ModelResponse(parts=[TextPart(text)])


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


def _find_return(returned: list[Returned]) -> str | None:
    return next(
        (
            r.model_response_str()
            for r in returned
            if isinstance(r, ToolReturnPart) and r.tool_name == "find_entities"
        ),
        None,
    )


def _after_find(user: str, content: str, instructions: str, tools: set[str]) -> ModelResponse:
    """Answer about the entity `find_entities` found (fetching its links when asked), the project's
    ready tasks for an unnamed "what's next?", or say that nothing by that name exists."""
    items = parse_items(content)
    if "open tasks, ready first" in content.split("\n", 1)[0]:
        return _text(answer_ready(items))
    if not items:
        focus = _FOCUS.search(instructions)
        if focus and "get_linked_entities" in tools and needs_links(user):
            return _call("get_linked_entities", {"entity_id": focus.group(3), "entity_kind": focus.group(1)})
        return _text(
            f'I found no task, plan, goal or other entity named like "{named_terms(user)}" in this project.'
        )
    best = items[0]
    if needs_links(user) and "get_linked_entities" in tools:
        return _call("get_linked_entities", {"entity_id": best.id, "entity_kind": best.kind})
    return _text(answer_entity(user, best, None))


def _after_tools(user: str, returned: list[Returned], instructions: str, tools: set[str]) -> ModelResponse:
    last = returned[-1]
    if isinstance(last, RetryPromptPart) or last.model_response_str().lstrip().startswith("{"):
        return _text(tool_error(last))
    content = last.model_response_str()
    packet = next(
        (
            r.model_response_str()
            for r in returned
            if isinstance(r, ToolReturnPart) and r.tool_name == "load_context_for_task"
        ),
        instructions if "## Context Loaded" in instructions else None,
    )
    if last.tool_name == "find_entities":
        return _after_find(user, content, instructions, tools)
    if last.tool_name == "get_linked_entities":
        links = parse_links(content)
        found = parse_items(_find_return(returned) or "")
        if found:
            return _text(answer_entity(user, found[0], links))
        return _text(answer_links(user, _subject(instructions), links, _focus_state(instructions)))
    if last.tool_name == "get_entry":
        return _text(after_entry(answer_entry(content, packet), packet))
    if last.tool_name == "search_knowledge":
        options = [f"- **{code}:** {name.split(' (')[0]}" for code, name in packet_codes(content)][:4]
        if options:
            return _text("I am not sure which one you mean. Is it one of these?\n\n" + "\n".join(options))
    if last.tool_name == "load_context_for_task":
        code = best_code(user, content)
        if code and "get_entry" in tools:
            return _call("get_entry", {"code": code})
        return _text(after_packet(user, content))
    if last.tool_name == "get_context_for_story":
        return _text(content)
    return _text(f"Here is what `{last.tool_name}` found:\n\n{content[:2500]}")


def _is_vague_question(user: str) -> bool:
    """A short question naming no entry ("What about the seat thing?"): worth a search and a
    "which one?" rather than a guess; statements and long requests are not."""
    return user.strip().endswith("?") and 0 < len(search_terms(user)) <= 4


_STORY = re.compile(r"\b(US-\d+)\b", re.I)


_BOLD = re.compile(r"^- \*\*(.+?)\*\*", re.M)


def _previous_reply(messages: list[ModelMessage]) -> str:
    """The assistant's text before the latest user message ('' when there is none)."""
    texts = [
        part.content
        for message in messages[:-1]
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, TextPart)
    ]
    return texts[-1] if texts else ""


def _about_entity(user: str, instructions: str, tools: set[str], previous: str) -> ModelResponse | None:
    """A question about a named entity (or the focus's own fields, or the project's next work):
    `find_entities` first; None when the question is not one."""
    asked = aspects(user)
    if not asked or "find_entities" not in tools:
        return None
    terms = named_terms(user)
    focus = _FOCUS.search(instructions)
    named = _BOLD.search(previous)
    if "after" in asked and not terms and named:  # "And after that?": the first item just named
        return _call("find_entities", {"query": named.group(1)})
    if terms:
        return _call("find_entities", {"query": terms})
    if focus and set(asked) & {"when", "who", "state"}:
        return _call("find_entities", {"query": focus.group(2), "kind": focus.group(1)})
    if not focus and "next" in asked:
        return _call("find_entities", {"query": "", "kind": "task", "limit": 10})
    return None


def _decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    user, returned, instructions = _latest(messages)
    tools = {t.name for t in info.function_tools}
    if info.output_tools:  # structured output (e.g. the pattern analyst): offline finds nothing new
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {})])
    caller = client_step(user, returned, info)  # the caller's own tools (OpenAI doors)
    if caller is not None:
        return caller
    step = (
        fact_step(messages, user, instructions, tools)
        or search_step(messages, user, tools)
        or capture_step(messages, user, tools)
    )
    if step is not None:
        return _call(step.tool, step.args) if step.tool else _text(step.text)
    if returned:
        return _after_tools(user, returned, instructions, tools)
    hello = greeting(user, instructions, _subject(instructions) if _FOCUS.search(instructions) else None)
    if hello:
        return _text(hello)
    story = _STORY.search(user)
    if story and "get_context_for_story" in tools:
        return _call("get_context_for_story", {"story_id": story.group(1).upper()})
    entity = _about_entity(user, instructions, tools, _previous_reply(messages))
    if entity:
        return entity
    answer = _from_context(user, instructions)
    if answer:
        return _text(answer)
    return _focus_or_knowledge(user, instructions, tools)


def _focus_or_knowledge(user: str, instructions: str, tools: set[str]) -> ModelResponse:
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
        if "**Confidence:** Low" in instructions:
            return _text(after_packet(user, instructions))
        if "load_context_for_task" in tools:
            return _call("load_context_for_task", {"task_description": user})
    packet = from_packet(user, instructions)
    if packet and "get_entry" in tools:  # a loaded packet answers a statement too ("Update the ... rule")
        return _call("get_entry", {"code": packet})
    if domain_agent and "**Confidence:** Low" in instructions:
        return _text(after_packet(user, instructions))
    if domain_agent and _is_vague_question(user) and "search_knowledge" in tools:
        return _call("search_knowledge", {"query": user})  # then: "is it one of these?"
    about = f" about the {focus.group(1)} **{focus.group(2)}**" if focus else ""
    return _text(
        f"I read your message{about}, but nothing in Orrery's context or tools answers it, and offline "
        "I cannot reason beyond that. With a real model configured I would; offline, ask me about this "
        "entity's links (what blocks it, what it belongs to) or how something works in the project."
    )


def offline_model() -> FunctionModel:
    """The deterministic offline model (a pydantic-ai FunctionModel with streaming)."""
    return OfflineModel(shaped(_decide), model_name="offline")
