"""`orrery eval scoping`: run scoping strategies on a dataset and measure what they put in context.

Every conversation is written to a real database through the normal message path (so stored token
counts, embeddings and full-text indexes are what production has), each turn at its real time. Then
each question is put to each strategy at each budget as production puts a turn: stored as the
newest user message (a day after the last session), which is the strategy's query; the question's
transaction is rolled back afterwards, so questions never see each other. A strategy never sees
answers or evidence.

Per strategy x budget: mean evidence recall (evidence turns present verbatim) over the answerable
questions, the same for the unanswerable (adversarial) ones apart, the share of questions with all
their evidence, recall per category, the share of evidence whose key facts survive anywhere
in the context (verbatim or in a summary), tokens (mean/max, never over the budget) and time per
selection (median/p95 wall, median CPU).
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import SessionSummary
from orrery.evaluation.baseline import LexicalBaseline, PlainBM25
from orrery.evaluation.dataset import UNANSWERABLE, Conversation, Dataset, Question
from orrery.memory.history import DbHistory
from orrery.memory.scoping import MessageScopingStrategy, ScopedMessage, ScopingContext, get_strategy
from orrery.memory.summaries import ExtractiveSummarizer, SummaryStore
from orrery.tokens import TokenCounter, counter_for

BASELINE = "lexical_baseline"
BASELINES = (BASELINE, "plain_bm25")
DEFAULT_STRATEGIES = ("last_n", "token_budget", "summary", "relevance")
DEFAULT_BUDGETS = (1000, 2000, 4000)


@dataclass
class Row:
    """One strategy at one budget, over every question of the dataset."""

    strategy: str
    budget: int
    recalls: list[float] = field(default_factory=list)
    categories: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    facts: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    over_budget: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The `--json` shape."""
        walls = sorted(self.wall)
        answerable = [r for c, v in self.categories.items() if c not in UNANSWERABLE for r in v]
        unanswerable = [r for c, v in self.categories.items() if c in UNANSWERABLE for r in v]
        return {
            "strategy": self.strategy,
            "budget": self.budget,
            "recall": _mean(answerable),
            "recall_unanswerable": _mean(unanswerable),
            "all_evidence": _mean([1.0 if r >= 1.0 else 0.0 for r in answerable]),
            "by_category": {c: _mean(v) for c, v in sorted(self.categories.items())},
            "facts_kept": _mean(self.facts),
            "tokens_mean": round(statistics.fmean(self.tokens), 1) if self.tokens else 0.0,
            "tokens_max": max(self.tokens, default=0),
            "over_budget": self.over_budget,
            "ms_median": _ms(statistics.median(walls)) if walls else 0.0,
            "ms_p95": _ms(walls[min(len(walls) - 1, int(0.95 * len(walls)))]) if walls else 0.0,
            "cpu_ms_median": _ms(statistics.median(self.cpu)) if self.cpu else 0.0,
            "questions": len(self.recalls),
        }


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def resolve_strategies(names: list[str]) -> list[MessageScopingStrategy]:
    """Strategies by registry name (plugins included), plus the two frozen baselines always: the
    project's stemmed `lexical_baseline` and the benchmark's `plain_bm25` yardstick."""
    chosen: list[MessageScopingStrategy] = [get_strategy(n) for n in names if n not in BASELINES]
    return [*chosen, LexicalBaseline(), PlainBM25()]


@dataclass
class LoadedConversation:
    """A conversation written to the database: its chat session and turn texts by id."""

    conversation: Conversation
    user_id: uuid.UUID
    session_id: uuid.UUID
    latest_seq: int
    texts: dict[str, str]
    facts: dict[str, list[str]]
    asked_at: datetime | None = None
    """When questions are asked: a day after the last session began."""


async def load_conversation(db: Database, conversation: Conversation) -> LoadedConversation:
    """Write a conversation as one chat session through the normal message path (one transaction)."""
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage, create_session
    from orrery.repo.identity import create_user

    async with db.transaction() as s:
        user = await create_user(s, f"eval-{conversation.id}-{uuid.uuid4().hex[:8]}@example.org", "Eval")
        chat = await create_session(s, user.id, title=f"eval {conversation.id}")
        seq = 0
        for session in conversation.sessions:
            for i, turn in enumerate(session.turns):
                seq += 1
                at = session.turn_time(i)
                await append_message(s, user.id, chat.id, NewMessage(turn.role, turn.text, created_at=at))
    last = conversation.sessions[-1].started() if conversation.sessions else datetime.now(UTC)
    return LoadedConversation(
        conversation,
        user.id,
        chat.id,
        seq,
        {t.id: t.text for _, t in conversation.turns()},
        {t.id: t.facts for _, t in conversation.turns()},
        last + timedelta(days=1),
    )


def score_question(
    question: Question, messages: list[ScopedMessage], loaded: LoadedConversation
) -> tuple[float, float]:
    """(evidence recall, share of evidence whose facts survive) for one selection."""
    verbatim = [m["content"] for m in messages if m["role"] != "system"]
    everything = "\n".join(m["content"] for m in messages).lower()
    hits = [any(loaded.texts[e] in text for text in verbatim) for e in question.evidence]
    kept = [
        hit or bool(loaded.facts[e]) and all(f.lower() in everything for f in loaded.facts[e])
        for e, hit in zip(question.evidence, hits, strict=True)
    ]
    return sum(hits) / len(hits), sum(kept) / len(kept)


class _Discard(Exception):
    """Rolls a question's transaction back once its selection is taken."""


async def timed_select(
    db: Database,
    strategy: MessageScopingStrategy,
    loaded: LoadedConversation,
    query: str | None,
    budget: int,
    counter: TokenCounter,
    settings: Settings,
    *,
    ask: bool = True,
) -> tuple[list[ScopedMessage], float, float]:
    """One selection as a turn makes it: the question stored as the newest user message, then its
    transaction rolled back so nothing stays (`ask=False`: only passed as the query, and whatever
    the strategy stores is kept). Time is the strategy's alone."""
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage

    taken: list[tuple[list[ScopedMessage], float, float]] = []
    try:
        async with db.transaction() as s:
            latest = loaded.latest_seq
            if ask and query:
                new = NewMessage("user", query, created_at=loaded.asked_at)
                await append_message(s, loaded.user_id, loaded.session_id, new)
                latest += 1
            ctx = ScopingContext(
                agent="coach",
                session_id=loaded.session_id,
                history=DbHistory(s, loaded.session_id, latest),
                query=query,
                budget=budget,
                counter=counter,
                settings=settings,
                summaries=SummaryStore(s),
                summarizer=ExtractiveSummarizer(counter),
            )
            wall, cpu = time.perf_counter(), time.process_time()
            result = await strategy.select(ctx)
            taken.append((result.messages, time.perf_counter() - wall, time.process_time() - cpu))
            if ask:
                raise _Discard
    except _Discard:
        pass
    return taken[0]


async def evaluate(
    db: Database,
    dataset: Dataset,
    settings: Settings,
    strategies: list[MessageScopingStrategy],
    budgets: list[int],
) -> list[Row]:
    """Every strategy at every budget over every question; rows in strategy, budget order."""
    counter = counter_for(settings.model)
    loaded = [await load_conversation(db, c) for c in dataset.conversations]
    rows: list[Row] = []
    for strategy in strategies:
        for budget in budgets:
            row = Row(strategy.name, budget)
            for conv in loaded:
                async with db.transaction() as s:  # each budget builds its own running summary
                    await s.execute(
                        delete(SessionSummary).where(SessionSummary.session_id == conv.session_id)
                    )
                # a strategy that keeps state between turns (a running summary) builds it once here,
                # as the turns before the questions would have
                await timed_select(db, strategy, conv, None, budget, counter, settings, ask=False)
                for question in conv.conversation.qa:
                    messages, wall, cpu = await timed_select(
                        db, strategy, conv, question.question, budget, counter, settings
                    )
                    used = sum(counter.count_message(m["role"], m["content"]) for m in messages)
                    recall, facts = score_question(question, messages, conv)
                    row.recalls.append(recall)
                    row.categories[question.category].append(recall)
                    row.facts.append(facts)
                    row.tokens.append(used)
                    row.over_budget += used > budget
                    row.wall.append(wall)
                    row.cpu.append(cpu)
            rows.append(row)
    return rows
