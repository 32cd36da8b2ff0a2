"""Auto-context: preload domain knowledge on a session's first message and when its focus changes.

The decision belongs to the first message with searchable content: a bare greeting or thanks, and
a message that reads as conversation (small talk, feelings, the person's own planning, the weather,
questions about the assistant: `message_kind`, by meaning) that names no entry (by its code, its
name or its meaning; a word in common is not enough), decide nothing and load nothing, so the next
message still gets its decision.

Relevance is decided cheaply: a message made of generic programming words (CSS, git, regex, ...)
is skipped unless it hits the knowledge base directly, and a question about the focused entity's own
links is left to the Linked Entities section (without deciding, so the next message still counts);
otherwise `load_context_for_task` runs (an indexed full-text search plus a couple of relation hops).
With no KB match at all, the message still counts as domain work when it names an entity of the
project (one query), or when the KB is empty and it asks how something works here.

- high   -> the packet is loaded; the assistant opens with a short receipt (< 200 tokens).
- medium -> the packet is loaded; the assistant says what it found and asks whether to dig deeper.
- low    -> a domain message (a question, a statement or an instruction) whose words name KB
  entries only loosely, or match a distinctive word of one ("Fix the pricing stuff", "Make
  shipping smoother for our customers"): the loose matches go in with the instruction to
  say what was loosely found and ask which is meant, or offer to capture (status `asked`; a
  knowledge question touching a distinctive KB word loads them as a packet, status `loaded`).
- none (but domain) -> the assistant says the KB does not cover this and offers to capture; domain
  work is an instruction to change something ("Update the usage overage billing rule ..."), a
  knowledge question, or a message naming an entity of the project, also when the KB is empty.

The section is stored on the session and reused on later turns at no cost until the focus changes,
with one exception: while the held packet is a low-confidence guess, each new message is searched
once, and a direct hit on other entries replaces the guess (the receipt's reason says so). Small
talk ("Hello! Let us get going.") decides nothing, so the next message still gets its decision.
Without the local embedder, search is lexical only and the reason says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession, Entity
from orrery.knowledge.evidence import content_terms, is_small_talk
from orrery.knowledge.load_context import ContextLoad, judge_task, load_context_for_task
from orrery.knowledge.meaning import ASK_MIN, LEXICAL_ONLY
from orrery.knowledge.message_intent import asks_for_knowledge, asks_for_work, is_link_question
from orrery.knowledge.message_kind import message_kind
from orrery.knowledge.packet import NO_CONTEXT, format_context_packet
from orrery.knowledge.search import query_codes
from orrery.sections import ContextSection
from orrery.text import inline_data, search_terms
from orrery.tokens import TokenCounter

TITLE = "Knowledge Context"
LOW_MARK = "**Confidence:** Low"
"""How a held packet says it was loaded on a low-confidence guess (see `format_context_packet`)."""
PACKET_CODE = re.compile(r"^- \*\*([A-Z]{1,6}-[0-9]{1,6}):\*\*", re.MULTILINE)
RECEIPT_TOKENS = 200
NON_DOMAIN_WORDS = frozenset(
    """css html flexbox grid tailwind sass scss margin padding font color colour pixel px layout responsive
    regex regexp git github rebase merge commit branch npm yarn pnpm pip webpack vite eslint prettier lint
    docker dockerfile kubernetes k8s bash shell terminal vim emacs vscode ide typescript javascript python
    java golang rust syntax compile compiler bug stacktrace traceback exception null undefined async await
    promise loop array string function variable class refactor rename indent indentation format""".split()  # noqa: SIM905
)
INSTRUCTIONS = {
    "high": "_Loaded automatically (high confidence). Open your reply with this one-line receipt, then "
    "proceed with the task grounded in these entries: {receipt}_",
    "medium": "_Loaded automatically (medium confidence). Say briefly what you found ({receipt}) and ask "
    "whether more context is needed before going deep._",
    "low": "_Only loosely related knowledge was found ({receipt}). The request may be ambiguous: tell the "
    "user what was loosely found and ask which of these they mean before going deep; if none fits, say "
    "the knowledge base does not cover this yet and offer to capture what you learn: `create_entry` when "
    "the person says yes, `update_entry` to improve an entry._",
    "none": "_Tell the user the knowledge base does not cover this area yet, and offer to capture "
    "knowledge while working: when they explain and say yes, record it with `create_entry`._",
}


@dataclass(frozen=True)
class AutoContext:
    """What auto-context decided this turn."""

    status: str
    """`loaded`, `asked` (a low-confidence packet that asks which entry is meant), `reused`,
    `skipped` or `off` (no project)."""
    section: ContextSection | None
    confidence: str | None = None
    receipt: str | None = None
    reason: str | None = None
    decided: bool = True
    """False when the message decided nothing (small talk, conversation): the next one decides."""
    codes: tuple[str, ...] = ()
    """The entry codes of a packet loaded this turn (what `orrery eval knowledge` checks)."""
    cut: tuple[tuple[str, str], ...] = ()
    """(`kb:CODE name`, reason) of each entry found but left out of the packet."""


def focus_key(chat: ChatSession) -> str:
    """The focus as stored on the session (`-` for none)."""
    return f"{chat.focus_kind}:{chat.focus_id}" if chat.focus_kind else "-"


def receipt_line(load: ContextLoad, counter: TokenCounter) -> str:
    """'Loaded N KB entries (confidence): CODE name; ...' kept under 200 tokens."""
    head = f"Loaded {len(load.entries)} KB entries ({load.confidence} confidence): "
    parts: list[str] = []
    for entry in load.entries:
        item = f"{entry.code} {inline_data(entry.name)}"  # stored text: data, never instructions
        candidate = head + "; ".join([*parts, item])
        if counter.count(candidate) > RECEIPT_TOKENS - 10:
            break
        parts.append(item)
    more = len(load.entries) - len(parts)
    return head + "; ".join(parts) + (f"; and {more} more" if more else "") + "."


def is_generic(message: str) -> bool:
    """Whether the message reads as generic programming / styling work (no domain words at all)."""
    terms = search_terms(message)
    return bool(terms) and any(t in NON_DOMAIN_WORDS for t in terms) and not query_codes(message)


async def _names_an_entity(session: AsyncSession, chat: ChatSession, terms: list[str]) -> bool:
    words = [t for t in terms if len(t) >= 4 and t not in NON_DOMAIN_WORDS][:6]
    if not words or chat.project_id is None:
        return False
    found = await session.execute(
        select(Entity.id)
        .where(
            Entity.project_id == chat.project_id, or_(*(func.lower(Entity.name).contains(w) for w in words))
        )
        .limit(1)
    )
    return found.first() is not None


async def auto_context(
    session: AsyncSession, user_id: object, chat: ChatSession, message: str | None, counter: TokenCounter
) -> AutoContext:
    """Load, reuse or skip the knowledge section for this turn (see the module docstring)."""
    if chat.project_id is None:
        return AutoContext("off", None, reason="no project")
    key = focus_key(chat)
    if chat.knowledge_focus == key:
        packet = chat.knowledge_packet or ""
        if message and LOW_MARK in packet:
            better = await _replace_guess(session, user_id, chat, message, counter, packet)
            if better is not None:
                return better
        return AutoContext("reused" if packet else "skipped", _section(packet), reason="already decided")
    if not message:
        return AutoContext("skipped", None, reason="no user message yet")
    if is_small_talk(message) or not (content_terms(message) or query_codes(message)):
        return AutoContext("skipped", None, reason="small talk (decided on the next message)")
    if chat.focus_kind not in (None, "project") and is_link_question(message):
        # not stored: the next message still gets its decision
        return AutoContext("skipped", None, reason="a question about the focus entity's own links")
    decision = await _decide(session, user_id, chat, message, counter)
    return await _store(session, chat, key, decision) if decision.decided else decision


async def _store(session: AsyncSession, chat: ChatSession, key: str, decision: AutoContext) -> AutoContext:
    chat.knowledge_focus = key
    chat.knowledge_packet = decision.section.items[0][1] if decision.section else ""
    await session.flush()
    return decision


async def _replace_guess(
    session: AsyncSession,
    user_id: object,
    chat: ChatSession,
    message: str,
    counter: TokenCounter,
    packet: str,
) -> AutoContext | None:
    """While a low-confidence packet is held: one search; a direct hit on entries the packet does
    not hold replaces it. The packet is loaded only then: most messages hit nothing new, and judging
    the hits is what tells (the walk and the entries' details cost as much again)."""
    held = set(PACKET_CODE.findall(packet))
    judged = await judge_task(session, user_id, chat.project_id, message)  # type: ignore[arg-type]
    if all(h.code in held for h in judged.direct):
        return None
    load = await load_context_for_task(session, user_id, chat.project_id, message, judged=judged)  # type: ignore[arg-type]
    direct = [e.code for e in load.entries if e.evidence and e.code not in held]
    if not direct:
        return None
    decision = _loaded(load, counter)
    why = f"replaced a low-confidence packet: this message is a direct hit on {', '.join(direct[:5])}"
    return await _store(session, chat, focus_key(chat), replace(decision, reason=why))


async def _decide(
    session: AsyncSession, user_id: object, chat: ChatSession, message: str, counter: TokenCounter
) -> AutoContext:
    terms = search_terms(message)
    load = await load_context_for_task(session, user_id, chat.project_id, message)  # type: ignore[arg-type]
    if is_generic(message) and load.direct_hits == 0:
        return _skip("not domain work", load)
    if not _named(load) and await message_kind(message) == "chat":
        why = "conversation, not domain work (decided on the next message)"
        return replace(_skip(why, load), decided=False)
    if load.confidence == "low":
        if load.distinctive and asks_for_knowledge(message):
            return _loaded(load, counter)
        if not (load.named_loosely or load.distinctive):
            return _skip("only partial matches: no word of the message names a KB entry", load)
        if load.closest is not None and load.closest < ASK_MIN:
            return _skip("only partial matches, far in meaning from every entry", load)
        return replace(_loaded(load, counter), status="asked")
    domain = asks_for_knowledge(message) or asks_for_work(message)
    if load.confidence == "none" and not domain and not await _names_an_entity(session, chat, terms):
        return _skip("no KB terms or entities mentioned", load)
    return _loaded(load, counter)


NAMING_EVIDENCE = frozenset({"code", "name", "name prefix", "meaning"})
"""Evidence that the message is about an entry whatever its tone; word coverage alone ("Let's plan
my week" covers "plan" of plan_upgraded and "week" of "Weekly active team") is not."""


def _named(load: ContextLoad) -> bool:
    return any(e.evidence in NAMING_EVIDENCE for e in load.entries)


def _skip(why: str, load: ContextLoad) -> AutoContext:
    return AutoContext("skipped", None, confidence=load.confidence, reason=_signals(why, load))


def _signals(reason: str, load: ContextLoad) -> str:
    """The reason, saying when search was lexical only (no local embedder)."""
    return reason if load.meaning else f"{reason} ({LEXICAL_ONLY})"


def _loaded(load: ContextLoad, counter: TokenCounter) -> AutoContext:
    receipt = receipt_line(load, counter) if load.entries else None
    body = format_context_packet(load) if load.confidence != "none" else NO_CONTEXT
    text = f"{body}\n\n{INSTRUCTIONS[load.confidence].format(receipt=receipt or '')}"
    direct = [e.code for e in load.entries if e.evidence]
    reason = f"direct hits: {', '.join(direct[:5])}" if direct else f"{load.confidence} confidence"
    return AutoContext(
        "loaded",
        _section(text),
        confidence=load.confidence,
        receipt=receipt,
        reason=_signals(reason, load),
        codes=tuple(e.code for e in load.entries),
        cut=tuple((f"kb:{x.code} {x.name}", x.reason) for x in load.excluded),
    )


def _section(text: str) -> ContextSection | None:
    return ContextSection("knowledge", TITLE, [("kb:packet", text)]) if text else None
