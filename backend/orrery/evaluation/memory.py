"""`orrery eval memory`: what a new chat knows of the person's earlier chats.

Each session of a conversation is written as its own chat of one person in one project, through the
normal message path (stored token counts, embeddings, full-text index), each chat dated as its
session. Every question is then asked as the first message of a new chat in that project, a day
after the last session, through the whole working-context assembly (the function a turn calls), at
each cap of the earlier-chats budget; the question's transaction is rolled back, so questions never
see each other. Evidence counts as recalled when its text is anywhere in what the model sees (the
system prompt and the messages), compared on letters and digits only, so quoting costs nothing.

The conversation budget is pinned to 2,500 tokens (the default at the scale of an 8,192-token
window), raised to the cap plus 500 when the cap is larger, so the cap is what is measured.
"""

from __future__ import annotations

import re
import statistics
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.evaluation.dataset import UNANSWERABLE, Conversation, Dataset, Question

DEFAULT_CAPS = (1000, 2000, 4000)
CONVERSATION_BUDGET = 2500
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def letters_and_digits(text: str) -> str:
    """Text as the score compares it: lowercase letters and digits only."""
    return _NOT_ALNUM.sub("", text.lower())


@dataclass
class MemoryRow:
    """One cap of the earlier-chats budget, over every question of the dataset."""

    cap: int
    categories: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tokens: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    recall_cpu: list[float] = field(default_factory=list)
    over_budget: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The `--json` shape."""
        answerable = [r for c, v in self.categories.items() if c not in UNANSWERABLE for r in v]
        unanswerable = [r for c, v in self.categories.items() if c in UNANSWERABLE for r in v]
        return {
            "cap": self.cap,
            "recall": _mean(answerable),
            "recall_unanswerable": _mean(unanswerable),
            "all_evidence": _mean([1.0 if r >= 1.0 else 0.0 for r in answerable]),
            "by_category": {c: _mean(v) for c, v in sorted(self.categories.items())},
            "tokens_mean": round(statistics.fmean(self.tokens), 1) if self.tokens else 0.0,
            "tokens_max": max(self.tokens, default=0),
            "over_budget": self.over_budget,
            "cpu_ms_median": _ms(self.cpu),
            "recall_cpu_ms_median": _ms(self.recall_cpu),
            "questions": len(answerable) + len(unanswerable),
        }


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2) if values else 0.0


@dataclass
class Person:
    """A conversation written as one person's chats in one project."""

    conversation: Conversation
    user_id: uuid.UUID
    project_id: uuid.UUID
    texts: dict[str, str]
    asked_at: datetime


async def load_person(db: Database, conversation: Conversation) -> Person:
    """Each session as its own chat (dated as the session), through the normal message path, each
    with its digest as the background job builds it once the chat is quiet."""
    from orrery.memory.digests import digest_all
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage, create_session
    from orrery.repo.identity import create_project, create_user

    chats = []
    async with db.transaction() as s:
        user = await create_user(s, f"memory-{conversation.id}-{uuid.uuid4().hex[:8]}@example.org", "Eval")
        project = await create_project(s, user.id, f"eval {conversation.id}")
        for session in conversation.sessions:
            title = f"session {session.id}"
            chat = await create_session(s, user.id, project_id=project.id, title=title)
            chats.append(chat.id)
            chat.created_at = chat.updated_at = session.started()
            for i, turn in enumerate(session.turns):
                new = NewMessage(turn.role, turn.text, created_at=session.turn_time(i))
                await append_message(s, user.id, chat.id, new)
    last = conversation.sessions[-1].started() if conversation.sessions else datetime.now(UTC)
    await digest_all(db, chats, last + timedelta(days=1))
    texts = {t.id: letters_and_digits(t.text) for _, t in conversation.turns()}
    return Person(conversation, user.id, project.id, texts, last + timedelta(days=1))


class _Discard(Exception):
    """Rolls a question's transaction back once its context is taken."""


async def ask(
    db: Database, person: Person, question: Question, settings: Settings
) -> tuple[str, int, float, float]:
    """The question as the first message of a new chat: (everything the model sees, the recalled
    section's tokens, the assembly's CPU seconds, recall's own CPU seconds)."""
    from orrery.context.earlier import fitted_section, request_for, room
    from orrery.context.working_context import assemble_working_context
    from orrery.memory.messages import append_message
    from orrery.memory.recall import gather
    from orrery.repo.chat import NewMessage, create_session
    from orrery.tokens import Budgets, counter_for

    taken: list[tuple[str, int, float, float]] = []
    try:
        async with db.transaction() as s:
            chat = await create_session(s, person.user_id, project_id=person.project_id)
            chat.created_at = person.asked_at
            new = NewMessage("user", question.question, created_at=person.asked_at)
            await append_message(s, person.user_id, chat.id, new)
            cpu = time.process_time()
            wc = await assemble_working_context(
                s,
                agent="coach",
                session_id=chat.id,
                user_id=person.user_id,
                settings=settings,
                now=person.asked_at,
                chat=chat,
            )
            cpu = time.process_time() - cpu
            section = next(r for r in wc.receipt.sections if r.name == "earlier_chats")
            seen = "\n".join([wc.system_prompt, *(m["content"] for m in wc.messages)])
            own = time.process_time()  # recall alone, as the turn ran it (the query's vector is cached)
            budget = room(
                Budgets.from_settings(settings),
                sum(r.tokens for r in wc.receipt.sections if r.name == "conversation"),
            )
            counter = counter_for(settings.model)
            fitted_section(
                await gather(s, request_for(chat, person.user_id, question.question), settings),
                budget,
                counter,
                question.question,
            )
            taken.append((seen, section.tokens, cpu, time.process_time() - own))
            raise _Discard
    except _Discard:
        pass
    return taken[0]


def settings_for(settings: Settings, cap: int) -> Settings:
    """`settings` with the cap under test, budgets at the scale of an 8,192-token window."""
    conversation = max(CONVERSATION_BUDGET, cap + 500)
    return settings.model_copy(
        update={"budget_earlier_chats": cap, "budget_conversation": conversation, "context_window": 8192}
    )


async def evaluate_memory(
    db: Database, dataset: Dataset, settings: Settings, caps: list[int]
) -> list[MemoryRow]:
    """Every question at every cap; rows in cap order."""
    people = [await load_person(db, c) for c in dataset.conversations]
    rows = []
    for cap in caps:
        row = MemoryRow(cap)
        capped = settings_for(settings, cap)
        for person in people:
            for question in person.conversation.qa:
                seen, tokens, cpu, own = await ask(db, person, question, capped)
                text = letters_and_digits(seen)
                hits = [person.texts[e] in text for e in question.evidence]
                row.categories[question.category].append(sum(hits) / len(hits))
                row.tokens.append(tokens)
                row.over_budget += tokens > cap
                row.cpu.append(cpu)
                row.recall_cpu.append(own)
        rows.append(row)
    return rows
