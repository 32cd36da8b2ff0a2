"""`orrery eval memory`: what a new chat knows of the person's earlier chats.

Each session of a conversation is written as its own chat of one person in one project, through the
normal message path (stored token counts, embeddings, full-text index), each chat dated as its
session. Every question is then asked as the first message of a new chat in that project, a day
after the last session, through the whole working-context assembly (the function a turn calls), at
each cap of the earlier-chats budget; the question's transaction is rolled back, so questions never
see each other. Evidence is scored in what the model sees (the system prompt and the messages) by
`memory_measures`: its whole text on letters and digits, or for the arc of the work (event order,
summaries) its rarest words. Beside each cap, the plain BM25 control packed into the same budget is
scored the same way (`memory_measures.Control`).

The conversation budget is pinned to 2,500 tokens (the default at the scale of an 8,192-token
window), raised to the cap plus 500 when the cap is larger, so the cap is what is measured.
"""

from __future__ import annotations

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
from orrery.evaluation.memory_measures import Control, Scorer

DEFAULT_CAPS = (1000, 2000, 4000)
CONVERSATION_BUDGET = 2500


@dataclass
class MemoryRow:
    """One cap of the earlier-chats budget, over every question of the dataset."""

    cap: int
    categories: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tokens: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    recall_cpu: list[float] = field(default_factory=list)
    over_budget: int = 0
    older_alone: int = 0
    """Questions about a changed value whose context holds an older statement and not the newer."""

    def add(
        self, question: Question, scored: tuple[float, bool], tokens: int, cpu: float, own: float
    ) -> None:
        """One question's score, cost and CPU."""
        self.categories[question.category].append(scored[0])
        self.older_alone += scored[1]
        self.tokens.append(tokens)
        self.over_budget += tokens > self.cap
        self.cpu.append(cpu)
        self.recall_cpu.append(own)

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
            "older_alone": self.older_alone,
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
    scorer: Scorer
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
    return Person(conversation, user.id, project.id, Scorer.of(conversation), last + timedelta(days=1))


class _Discard(Exception):
    """Rolls a question's transaction back once its context is taken."""


@dataclass(frozen=True)
class Asked:
    """A question asked in a new chat: everything the model sees, the recalled section's tokens,
    the assembly's CPU seconds, recall's own, and the budget recall had."""

    seen: str
    tokens: int
    cpu: float
    recall_cpu: float
    budget: int


async def ask(db: Database, person: Person, question: Question, settings: Settings) -> Asked:
    """The question as the first message of a new chat, its transaction rolled back."""
    from orrery.context.earlier import fitted_section, request_for, room
    from orrery.context.working_context import assemble_working_context
    from orrery.memory.messages import append_message
    from orrery.memory.recall import gather
    from orrery.repo.chat import NewMessage, create_session
    from orrery.tokens import Budgets, counter_for

    taken: list[Asked] = []
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
            taken.append(Asked(seen, section.tokens, cpu, time.process_time() - own, budget))
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
) -> tuple[list[MemoryRow], list[MemoryRow]]:
    """Every question at every cap, in a new chat and with the BM25 control in recall's place in the
    same budget; rows in cap order."""
    from orrery.tokens import counter_for

    counter = counter_for(settings.model)
    people = [await load_person(db, c) for c in dataset.conversations]
    controls = [Control.of(p.conversation, counter) for p in people]
    rows, bm25 = [], []
    for cap in caps:
        row, control_row = MemoryRow(cap), MemoryRow(cap)
        capped = settings_for(settings, cap)
        for person, control in zip(people, controls, strict=True):
            for question in person.conversation.qa:
                asked = await ask(db, person, question, capped)
                scored = person.scorer.score(question, asked.seen)
                row.add(question, scored, asked.tokens, asked.cpu, asked.recall_cpu)
                cpu = time.process_time()
                seen, tokens = control.context(question.question, asked.budget)
                cpu = time.process_time() - cpu
                control_row.add(question, person.scorer.score(question, seen), tokens, cpu, cpu)
        rows.append(row)
        bm25.append(control_row)
    return rows, bm25
