"""Turning stored data into what the templates show: safe markdown, tool-call cards, the chat
timeline (messages with agent switches between them) and a context receipt readable at a glance."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup

from orrery.db.models import AgentTransition, Message

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
"""`html: False`: raw HTML in a model reply or a stored text is shown as text, never interpreted."""
_PACKET_CODE = re.compile(r"\*\*([A-Za-z][A-Za-z0-9]*-[0-9]+):\*\*")


def markdown(text: str | None) -> Markup:
    """Markdown to HTML with raw HTML escaped and unsafe link schemes refused (markdown-it's default)."""
    return Markup(_MD.render(text or ""))  # noqa: S704 - markdown-it escapes everything when html is off


def plain(text: str | None) -> str:
    """Markdown as the words a reader sees (no `**`, `#`, backticks or link syntax), one line: for
    snippets shown as text."""
    parts: list[str] = []
    for token in _MD.parse(text or ""):
        if token.type == "inline":
            parts.extend(" " if c.type.endswith("break") else c.content for c in token.children or [])
        elif token.type in ("fence", "code_block"):
            parts.append(token.content)
        parts.append(" ")
    return " ".join("".join(parts).split())


def pretty_json(value: Any) -> str:
    """Tool arguments for a card."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def packet_codes(packet: str | None) -> list[str]:
    """The entry codes listed in a knowledge packet (`- **BR-012:** name`)."""
    return list(dict.fromkeys(_PACKET_CODE.findall(packet or "")))


@dataclass(frozen=True)
class TimelineItem:
    """A message, or an agent switch shown inline between messages."""

    kind: str  # "message" | "transition"
    message: Message | None = None
    transition: AgentTransition | None = None


def timeline(messages: list[Message], transitions: list[AgentTransition]) -> list[TimelineItem]:
    """Messages in order, each agent switch placed where it happened."""
    after_message: dict[Any, list[AgentTransition]] = {}
    loose: list[AgentTransition] = []
    for t in transitions:
        (after_message.setdefault(t.message_id, []) if t.message_id else loose).append(t)
    items: list[TimelineItem] = []
    for m in messages:
        while loose and loose[0].created_at <= m.created_at:
            items.append(TimelineItem("transition", transition=loose.pop(0)))
        items.append(TimelineItem("message", message=m))
        items.extend(TimelineItem("transition", transition=t) for t in after_message.get(m.id, []))
    items.extend(TimelineItem("transition", transition=t) for t in loose)
    return items


SECTION_TITLES = {
    "system": "System prompt",
    "profile": "Profile",
    "facts": "Remembered facts",
    "expertise": "Expertise",
    "focus": "Focus",
    "related": "Linked entities",
    "knowledge": "Knowledge",
    "conversation": "Conversation",
    "earlier_chats": "From earlier chats",
    "timeline": "Earlier chats (timeline)",
}
"""The receipt's sections as the inspector names them (caller sections keep their own title)."""
_PENDING_REASON = "no user message yet"


@dataclass
class SectionView:
    """One receipt section with the numbers the bars need and its items with human names."""

    name: str
    title: str
    tokens: int
    budget: int
    percent: int
    over: bool
    included: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    x: float = 0.0
    """Where this section starts on the stacked budget bar (percent of the whole budget)."""
    width: float = 0.0
    """Its share of the bar (percent of the whole budget)."""
    slot: float = 0.0
    """Its budget's share of the bar (the tick after it marks its limit)."""


@dataclass
class ReceiptView:
    """A context receipt arranged for the inspector."""

    agent: str
    model: str
    strategy: str
    encoding: str
    exact_tokens: bool
    budget_scale: float
    total_tokens: int
    total_budget: int
    sections: list[SectionView]
    notes: list[str]
    knowledge: dict[str, Any] | None

    @property
    def excluded_count(self) -> int:
        return sum(len(s.excluded) for s in self.sections)


def _item(raw: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """A receipt item with its human label and, for a message, whether it is recent or recalled."""
    key, reason = str(raw.get("key", "")), str(raw.get("reason", ""))
    tag = next((t for t in ("recent", "recalled") if reason.startswith(t)), None)
    if raw.get("chat_title"):  # recalled from an earlier chat: which chat, when, which messages
        span = key.rsplit(" seq ", 1)[-1]
        label = f"“{raw['chat_title']}” · {raw.get('date') or raw.get('chat_date')} · seq {span}"
        return {**raw, "label": label, "tag": tag}
    return {**raw, "label": labels.get(key, key), "tag": tag}


def receipt_view(
    receipt: dict[str, Any], labels: dict[str, str] | None = None, *, pending: bool = False
) -> ReceiptView:
    """The receipt (`ContextReceipt.as_dict()`) as a stacked bar and lists. `pending`: the view of a
    turn not sent yet, whose knowledge decision waits for the next message."""
    labels = labels or {}
    sections = []
    for s in receipt.get("sections", []):
        budget, tokens = int(s.get("budget") or 0), int(s.get("tokens") or 0)
        name = str(s.get("name", ""))
        sections.append(
            SectionView(
                name=name,
                title=SECTION_TITLES.get(name) or str(s.get("title") or name),
                tokens=tokens,
                budget=budget,
                percent=min(100, round(100 * tokens / budget)) if budget else (100 if tokens else 0),
                over=bool(budget) and tokens > budget,
                included=[_item(i, labels) for i in s.get("included", [])],
                excluded=[_item(i, labels) for i in s.get("excluded", [])],
            )
        )
    scale = max(sum(s.budget for s in sections), sum(s.tokens for s in sections), 1)
    start = 0.0
    for s in sections:
        s.x, s.width, s.slot = start, 100 * s.tokens / scale, 100 * max(s.budget, s.tokens) / scale
        start += s.slot
    knowledge = receipt.get("knowledge")
    if pending and knowledge and knowledge.get("reason") == _PENDING_REASON:
        knowledge = {**knowledge, "status": "waiting", "reason": "decided when you send your next message"}
    return ReceiptView(
        agent=str(receipt.get("agent", "")),
        model=str(receipt.get("model", "")),
        strategy=str(receipt.get("strategy", "")),
        encoding=str(receipt.get("encoding", "")),
        exact_tokens=bool(receipt.get("exact_tokens")),
        budget_scale=float(receipt.get("budget_scale") or 1),
        total_tokens=int(receipt.get("total_tokens") or 0),
        total_budget=sum(s.budget for s in sections),
        sections=sections,
        notes=[str(n) for n in receipt.get("notes", [])],
        knowledge=knowledge,
    )
