"""How the offline model carries out the capture it offers (seed 000's loop: ask or capture, then
feed back), deterministically.

1. A reply that finds nothing (or only loose matches) offers capture (`CAPTURE`).
2. The person explains ("Annual plans pay their overage quarterly, in arrears."): the model asks
   whether to capture that, naming the collection it would go to (`CONFIRM`).
3. The person says yes ("Yes", "Sure, go ahead"): `create_entry` with the explanation; a "yes" with
   the explanation in it ("Yes: annual plans ...") is captured at once. A bare "yes" to the offer,
   with nothing explained yet, asks what the entry should say.
4. The tool's answer is said as "Captured as BR-013 ..." (a refusal as a sentence).
"""

from __future__ import annotations

import re

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolReturnPart,
)

from orrery.agents.offline_facts import Step
from orrery.agents.offline_knowledge import CAPTURE as OFFER
from orrery.agents.offline_knowledge import tool_error
from orrery.knowledge.evidence import content_terms

CAPTURE = OFFER

CONFIRM = "Shall I capture this as a new knowledge entry"
ASK_WHAT = "What should the entry say? Tell me the rule, term or decision in a sentence or two."
_YES = re.compile(
    r"^\s*(?:yes|yeah|yep|yup|sure|ok|okay|please do|do it|go ahead|capture it|please capture it|"
    r"sounds good|absolutely|definitely)\b[\s,.!:;-]*(?:(?:please|go ahead|do it|capture it)\b[\s,.!:;-]*)*",
    re.I,
)
_COLLECTIONS = (
    ("glossary", re.compile(r"\b(?:means|stands for|is defined as|definition|we call|term)\b", re.I)),
    ("decisions", re.compile(r"\b(?:we decided|decision|we chose|chosen|we picked)\b", re.I)),
    ("tracking-events", re.compile(r"\b(?:event fires|event is sent|analytics event|we track)\b", re.I)),
)
NAME_WORDS = 8
MIN_WORDS = 3
"""An explanation has at least this many content words ("Yes" and "sure thing" are not one)."""


def _turns(messages: list[ModelMessage]) -> tuple[list[str], list[str]]:
    """The person's texts and the assistant's replies, oldest first."""
    users: list[str] = []
    replies: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            said = [p.content for p in message.parts if p.part_kind == "user-prompt"]
            users += [text for text in said if isinstance(text, str)]
        elif isinstance(message, ModelResponse):
            replies += [p.content for p in message.parts if isinstance(p, TextPart)]
    return users, replies


def collection_for(text: str) -> str:
    """The collection an explanation belongs to: a definition, a decision, an event, else a rule."""
    return next((slug for slug, cue in _COLLECTIONS if cue.search(text)), "business-rules")


def name_for(text: str) -> str:
    """A short name: the explanation's first clause, at most `NAME_WORDS` words."""
    clause = re.split(r"[.;:!?,(]", text.strip(), maxsplit=1)[0]
    words = clause.split()[:NAME_WORDS]
    name = " ".join(words).strip(" -")
    return name[:1].upper() + name[1:]


def _create(text: str) -> Step:
    body = " ".join(text.split())
    args: dict[str, object] = {
        "collection": collection_for(body),
        "name": name_for(body),
        "description": body,
    }
    return Step(tool="create_entry", args=args)


def _confirm(text: str) -> Step:
    body = " ".join(text.split())
    return Step(
        text=f'{CONFIRM} in {collection_for(body)}, named "{name_for(body)}", saying: "{body}"? '
        "Say yes to capture it."
    )


def capture_step(messages: list[ModelMessage], user: str, tools: set[str]) -> Step | None:
    """The next step of a capture the previous reply offered or proposed, or None."""
    if "create_entry" not in tools:
        return None
    created = _created(messages)
    if created is not None or _mid_turn(messages):
        return created
    users, replies = _turns(messages)
    previous = replies[-1] if replies else ""
    yes = _YES.match(user)
    rest = user[yes.end() :].strip() if yes else user.strip()
    explains = len(content_terms(rest)) >= MIN_WORDS and not rest.endswith("?")
    if CONFIRM in previous and yes and len(users) >= 2:
        return _create(rest if explains else users[-2])
    if CAPTURE in previous or ASK_WHAT in previous:
        if yes and explains:
            return _create(rest)
        if explains:
            return _confirm(rest)
        if yes:
            return Step(text=ASK_WHAT)
    return None


def _mid_turn(messages: list[ModelMessage]) -> bool:
    """Whether this step follows a tool call of this turn (not the person's message)."""
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and not any(p.part_kind == "user-prompt" for p in last.parts)


def _created(messages: list[ModelMessage]) -> Step | None:
    """After `create_entry` answered this turn: say what was captured (or why not)."""
    last = messages[-1] if messages else None
    if not isinstance(last, ModelRequest):
        return None
    parts = [p for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
    parts = [p for p in parts if p.tool_name == "create_entry"]
    if not parts:
        return None
    if isinstance(parts[-1], RetryPromptPart):
        return Step(text=tool_error(parts[-1]))
    done = [p for p in parts if isinstance(p, ToolReturnPart)]
    entry = done[-1].model_response_str().removeprefix("Created.").strip()
    head = re.search(r"^## ([A-Z]{1,6}-\d{1,6}): (.+)$", entry, re.M)
    said = f"Captured as **{head.group(1)}** ({head.group(2)})" if head else "Captured"
    return Step(text=f"{said}. It is in the knowledge base now, for you and the team.\n\n{entry}")
