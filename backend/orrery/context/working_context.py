"""Assemble what one agent sees on one turn, inside per-section token budgets, with a receipt.

Round trips are constant: the session (1), long-term memory (2), the latest message for the query
(1, skipped when the caller passes `query`), and the strategy's reads (1-3, plus a read and a write when a
summary is extended), then recall from the person's earlier chats (1-3, none when the chat's own
messages leave no room: `context/earlier.py`). Nothing grows with the number of messages, chats,
goals or check-ins.

When the chat is focused on an entity, the focus entity (1 query) and its abbreviated linked
entities (1 query, or none from the cache) are added; a project focus adds the project. On the
session's first user message (and when the focus changes) auto-context may load the knowledge
packet (a few indexed queries, once); later turns reuse the stored packet at no cost.

System prompt order: base prompt, user context, remembered facts, standing instructions
(`context/instructions.py`), expertise, focus, knowledge, linked entities, caller sections, the
"Earlier chats" timeline (`context/timeline.py`: 1 query, its own budget `timeline`), then the
excerpts from earlier chats. Each has its own budget: the
knowledge packet `knowledge`, the linked entities `related` (capped at ~500 tokens), the facts
`facts`, so none can starve another; the excerpts take what the chat's own messages leave of the
`conversation` budget, up to `earlier_chats`, so the total stays what it was.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.context.earlier import TITLE as EARLIER_TITLE
from orrery.context.earlier import EarlierChats, earlier_chats
from orrery.context.instructions import fit_instructions
from orrery.context.strategy import StrategyChoice, resolve_strategy
from orrery.context.timeline import timeline_for
from orrery.db.models import ChatSession, Entity
from orrery.graph.focus import focus_sections
from orrery.knowledge.autocontext import AutoContext, auto_context
from orrery.memory.expertise import EXPERTISE_DIR, modules_for
from orrery.memory.injection import InjectionItem, facts_section, injection_items, render
from orrery.memory.long_term import LongTermMemory, fetch_long_term_memory
from orrery.memory.scoping import ReceiptItem, ScopedMessage, ScopingResult, get_strategy
from orrery.memory.summaries import Summarizer
from orrery.memory.turn_view import turn_view
from orrery.repo.chat import get_session
from orrery.repo.scope import as_uuid
from orrery.roster import get_agent
from orrery.sections import SECTION_JOINT, ContextSection, frame_tokens, items_cost
from orrery.tokens import Budgets, TokenCounter, counter_for, fit_whole_items

PROFILE_DROP_ORDER = ("goals", "known", "user")
"""When the user section is over budget, optional lines are kept in this order of importance."""


@dataclass(frozen=True)
class SectionReceipt:
    """Tokens, budget and the fate of every item in one section."""

    name: str
    budget: int
    """What this section could use (a shared budget minus what earlier sections took)."""
    tokens: int
    included: list[ReceiptItem] = field(default_factory=list)
    excluded: list[ReceiptItem] = field(default_factory=list)
    title: str = ""


@dataclass(frozen=True)
class ContextReceipt:
    """What went into the context, what was left out, and why."""

    agent: str
    model: str
    encoding: str
    exact_tokens: bool
    budget_scale: float
    strategy: str
    sections: list[SectionReceipt]
    notes: list[str]
    total_tokens: int
    knowledge: dict[str, Any] | None = None
    """Auto-context: status (loaded, reused, skipped), confidence, the receipt for the user, reason."""
    strategy_source: str = ""
    """Why this strategy: explicit, session, agent setting, global setting or agent default."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: what `dataclasses.asdict` gives, built directly (every turn's `context`
        event carries it; `asdict` deep-copies every value and cost ten times as much)."""
        out = dict(vars(self))
        out["sections"] = [_section_dict(s) for s in self.sections]
        out["notes"] = list(self.notes)
        out["knowledge"] = copy.deepcopy(self.knowledge)
        return out


def _section_dict(section: SectionReceipt) -> dict[str, Any]:
    out = dict(vars(section))
    out["included"] = [dict(vars(i)) for i in section.included]
    out["excluded"] = [dict(vars(i)) for i in section.excluded]
    return out


@dataclass(frozen=True)
class WorkingContext:
    """System prompt, scoped messages, tools (filled by the orchestrator) and the receipt."""

    system_prompt: str
    messages: list[ScopedMessage]
    tools: list[Any]
    receipt: ContextReceipt
    memory: LongTermMemory


async def assemble_working_context(
    session: AsyncSession,
    *,
    agent: str,
    base_prompt: str | None = None,
    session_id: uuid.UUID | str,
    user_id: uuid.UUID | str,
    settings: Settings,
    scoping: str | None = None,
    scoping_options: dict[str, Any] | None = None,
    query: str | None = None,
    summarizer: Summarizer | None = None,
    sections: Sequence[ContextSection] = (),
    now: datetime | None = None,
    expertise_dir: Path = EXPERTISE_DIR,
    auto_knowledge: bool = True,
    through_seq: int | None = None,
    chat: ChatSession | None = None,
    focus: Entity | None = None,
) -> WorkingContext:
    """The agent's working context for the session's current turn. `base_prompt` defaults to the
    agent's prompt, `scoping` (an override) to what `resolve_strategy` picks; `scoping_options` add to
    the agent's options; `through_seq` (a user message's seq) rebuilds that past turn's view; `chat` is
    the session's row and `focus` its focused entity when the caller has just read them for this user
    (reads fewer per turn)."""
    user_id = as_uuid(user_id, "user")  # a malformed id is not found, never a database error
    definition = get_agent(agent)  # a built-in or plugin agent, else a ValidationError listing them
    if chat is None or chat.id != as_uuid(session_id, "session") or chat.user_id != user_id:
        chat = await get_session(session, user_id, session_id)
    choice = resolve_strategy(definition, settings, session_strategy=chat.scoping_strategy, explicit=scoping)
    base_prompt = definition.prompt() if base_prompt is None else base_prompt
    threshold = settings.engagement_threshold_days
    memory = await fetch_long_term_memory(
        session, user_id, project_id=chat.project_id, threshold_days=threshold, now=now
    )
    counter = counter_for(settings.model)
    budgets = Budgets.from_settings(settings)
    view = await turn_view(session, chat, settings, through_seq=through_seq, query=query)
    prompt = await _system_prompt(
        session,
        user_id,
        chat,
        agent,
        base_prompt,
        view.query,
        memory,
        budgets,
        counter,
        expertise_dir=expertise_dir,
        auto_knowledge=auto_knowledge,
        sections=[*sections, *await timeline_for(session, chat, user_id, budgets.timeline, counter)],
        focus=focus,
    )
    scoped = await get_strategy(choice.name).select(
        view.scoping_context(agent, {**choice.options, **(scoping_options or {})}, summarizer)
    )
    earlier = await earlier_chats(session, chat, user_id, view, budgets, settings, scoped.included)
    text = SECTION_JOINT.join(p for p in (prompt.text, earlier.text) if p)
    receipt = _receipt(agent, counter, budgets, choice, scoped, prompt, view.notes(), earlier, text)
    return WorkingContext(text, scoped.messages, [], receipt, memory)


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt's text, a receipt per section, and the knowledge packet decision."""

    text: str
    receipts: list[SectionReceipt]
    knowledge: AutoContext | None


async def _system_prompt(
    session: AsyncSession,
    user_id: uuid.UUID,
    chat: ChatSession,
    agent: str,
    base_prompt: str,
    query: str | None,
    memory: LongTermMemory,
    budgets: Budgets,
    counter: TokenCounter,
    *,
    expertise_dir: Path,
    auto_knowledge: bool,
    sections: Sequence[ContextSection],
    focus: Entity | None = None,
) -> SystemPrompt:
    """Base prompt, profile, expertise, then focus, knowledge and linked sections, each fitted to its
    budget; what does not fit is in the receipt with its reason."""
    base_text, base_receipt = _fit_paragraphs("system", base_prompt, budgets.system, counter)
    profile_text, profile_receipt = _fit_profile(injection_items(memory), budgets.profile, counter)
    facts = [_fit_section(facts_section(memory), budgets.facts, counter)] if memory.facts else []
    if memory.standing:  # the person's standing instructions and preferences, their own budget
        facts.append(fit_instructions(memory.standing, query, budgets.instructions, counter, _fit_section))
    expertise_text, expertise_receipt = _fit_expertise(
        agent, query, memory.engagement.status, budgets.expertise, counter, expertise_dir
    )
    knowledge = await auto_context(session, user_id, chat, query, counter) if auto_knowledge else None
    kb = [knowledge.section] if knowledge and knowledge.section else []
    focused = await focus_sections(session, user_id, chat, budgets, counter, focus)
    focus_only = [s for s in focused if s.name == "focus"]
    linked = [s for s in focused if s.name != "focus"]
    extra = _fit_sections([*focus_only, *kb, *linked, *sections], budgets, counter)
    for _, section_receipt in extra:  # entries the packet left out (max_results), with their reason
        if knowledge and section_receipt.name == "knowledge":
            section_receipt.excluded.extend(ReceiptItem("knowledge", k, None, r) for k, r in knowledge.cut)
    parts = [base_text, profile_text, *(t for t, _ in facts), expertise_text, *(t for t, _ in extra)]
    receipts = [
        base_receipt,
        profile_receipt,
        *(r for _, r in facts),
        expertise_receipt,
        *(r for _, r in extra),
    ]
    return SystemPrompt("\n\n".join(p for p in parts if p), receipts, knowledge)


def _receipt(
    agent: str,
    counter: TokenCounter,
    budgets: Budgets,
    choice: StrategyChoice,
    scoped: ScopingResult,
    prompt: SystemPrompt,
    view_notes: list[str],
    earlier: EarlierChats,
    text: str,
) -> ContextReceipt:
    """What went in and what stayed out, section by section, with the conversation and what came
    from earlier chats (the conversation budget's rest) last."""
    conversation = SectionReceipt(
        "conversation",
        budgets.conversation - earlier.budget,
        sum(i.tokens or 0 for i in scoped.included),
        scoped.included,
        scoped.excluded,
    )
    recalled = SectionReceipt(
        "earlier_chats",
        earlier.budget,
        earlier.fitted.tokens,
        earlier.fitted.included,
        earlier.fitted.excluded,
        title=EARLIER_TITLE,
    )
    return ContextReceipt(
        agent=agent,
        model=counter.model,
        encoding=counter.encoding_name,
        exact_tokens=counter.exact,
        budget_scale=budgets.scale,
        strategy=scoped.strategy or choice.name,
        strategy_source=choice.source,
        sections=[*prompt.receipts, conversation, recalled],
        notes=[*scoped.notes, *view_notes, *earlier.notes],
        total_tokens=counter.count(text) + conversation.tokens,
        knowledge=_knowledge_summary(prompt.knowledge),
    )


def _knowledge_summary(knowledge: AutoContext | None) -> dict[str, Any] | None:
    if knowledge is None:
        return None
    return {
        "status": knowledge.status,
        "confidence": knowledge.confidence,
        "receipt": knowledge.receipt,
        "reason": knowledge.reason,
    }


def _fit_paragraphs(name: str, text: str, budget: int, counter: TokenCounter) -> tuple[str, SectionReceipt]:
    paragraphs = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    keep, drop = fit_whole_items(paragraphs, budget, counter, separator="\n\n")
    kept = "\n\n".join(paragraphs[i] for i in keep)
    return kept, SectionReceipt(
        name,
        budget,
        counter.count(kept),
        [ReceiptItem("paragraph", f"paragraph {i + 1}", counter.count(paragraphs[i]), "fits") for i in keep],
        [
            ReceiptItem("paragraph", f"paragraph {i + 1}", counter.count(paragraphs[i]), "over budget")
            for i in drop
        ],
    )


def _fit_profile(
    items: list[InjectionItem], budget: int, counter: TokenCounter
) -> tuple[str, SectionReceipt]:
    """Required lines always; optional lines by importance while the rendered section fits (when
    everything fits, which is the usual case, the section is rendered and counted once)."""
    chosen = {i for i, item in enumerate(items) if item.required}
    whole = render(items)
    if counter.count(whole) <= budget:
        included = [
            ReceiptItem(i.group, i.key, counter.count(i.text), "required" if i.required else "fits")
            for i in items
        ]
        return whole, SectionReceipt("profile", budget, counter.count(whole), included, [])
    optional = sorted(
        (i for i, item in enumerate(items) if not item.required),
        key=lambda i: (PROFILE_DROP_ORDER.index(items[i].group), i),
    )
    excluded: list[ReceiptItem] = []
    for i in optional:
        trial = chosen | {i}
        if counter.count(render([items[j] for j in sorted(trial)])) <= budget:
            chosen = trial
        else:
            excluded.append(
                ReceiptItem(items[i].group, items[i].key, counter.count(items[i].text), "over budget")
            )
    text = render([items[j] for j in sorted(chosen)])
    included = [
        ReceiptItem(
            items[j].group,
            items[j].key,
            counter.count(items[j].text),
            "required" if items[j].required else "fits",
        )
        for j in sorted(chosen)
    ]
    return text, SectionReceipt("profile", budget, counter.count(text), included, excluded)


def _fit_expertise(
    agent: str, query: str | None, engagement: str, budget: int, counter: TokenCounter, directory: Path
) -> tuple[str, SectionReceipt]:
    modules = modules_for(agent, query, engagement, directory)
    header = "## Expertise"
    rendered = [m.render() for m in modules]
    keep, drop = fit_whole_items(
        rendered, max(0, budget - counter.count(header) - 1), counter, separator="\n\n"
    )
    text = "\n\n".join([header, *(rendered[i] for i in keep)]) if keep else ""
    return text, SectionReceipt(
        "expertise",
        budget,
        counter.count(text),
        [ReceiptItem("module", modules[i].slug, counter.count(rendered[i]), "for this agent") for i in keep],
        [ReceiptItem("module", modules[i].slug, counter.count(rendered[i]), "over budget") for i in drop],
    )


def _fit_sections(
    sections: Sequence[ContextSection], budgets: Budgets, counter: TokenCounter
) -> list[tuple[str, SectionReceipt]]:
    """Each section fits its own budget (capped by `section.budget`); caller sections drawing on the
    same named budget share it, first come first served."""
    remaining: dict[str, int] = {}
    fitted = []
    for section in sections:
        budget = remaining.setdefault(section.name, budgets.of(section.name))
        if section.budget is not None:
            budget = min(budget, section.budget)
        text, receipt = _fit_section(section, budget, counter)
        remaining[section.name] -= receipt.tokens
        fitted.append((text, receipt))
    return fitted


def _fit_section(section: ContextSection, budget: int, counter: TokenCounter) -> tuple[str, SectionReceipt]:
    """Whole items in order while they fit; every item is counted once (or not at all when the
    section brings its counts) and the frame is counted as every fitter counts it."""
    texts = [text for _, text in section.items]
    tokens = list(section.tokens) if section.tokens is not None else [counter.count(t) for t in texts]
    sep = section.separator
    sep_tokens = counter.count(sep)
    room = budget - frame_tokens(section.title, sep, counter)
    keep: list[int] = []
    drop: list[int] = []
    used = 0
    for i, cost in enumerate(tokens):
        after = items_cost([used, cost], sep_tokens) if keep else cost  # as `items_cost` of all kept
        if after <= room:
            keep.append(i)
            used = after
        else:
            drop.append(i)
    text = sep.join([f"## {section.title}", *(texts[i] for i in keep)]) if keep else ""

    def items(indices: list[int], reason: str) -> list[ReceiptItem]:
        return [ReceiptItem(section.name, section.items[i][0], tokens[i], reason) for i in indices]

    return text, SectionReceipt(
        name=section.name,
        budget=budget,
        tokens=counter.count(text) + counter.count(SECTION_JOINT) if text else 0,
        included=items(keep, "fits"),
        excluded=[*items(drop, "over budget"), *section.excluded],
        title=section.title,
    )
