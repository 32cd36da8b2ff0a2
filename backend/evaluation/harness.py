"""`orrery eval scoping`: run scoping strategies on a dataset and measure what they put in context.

Every conversation is written to a real database through the normal message path (so stored token
counts and full-text indexes are what production has), then each question is put to each strategy
at each budget. The question is the only query: a strategy never sees answers or evidence.

Per strategy x budget: mean evidence recall (evidence turns present verbatim), the share of questions
with all their evidence, recall per category, the share of evidence whose key facts survive anywhere
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

from backend.config import Settings
from backend.db.engine import Database
from backend.db.models import SessionSummary
from backend.evaluation.baseline import LexicalBaseline
from backend.evaluation.dataset import Conversation, Dataset, Question
from backend.memory.history import DbHistory
from backend.memory.scoping import MessageScopingStrategy, ScopedMessage, ScopingContext, get_strategy
from backend.memory.summaries import ExtractiveSummarizer, SummaryStore
from backend.tokens import TokenCounter, counter_for

BASELINE = "lexical_baseline"
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
        return {
            "strategy": self.strategy,
            "budget": self.budget,
            "recall": _mean(self.recalls),
            "all_evidence": _mean([1.0 if r >= 1.0 else 0.0 for r in self.recalls]),
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
    """Strategies by registry name (plugins included), plus the lexical baseline always."""
    chosen: list[MessageScopingStrategy] = [get_strategy(n) for n in names if n != BASELINE]
    return [*chosen, LexicalBaseline()]


@dataclass
class LoadedConversation:
    """A conversation written to the database: its chat session and turn texts by id."""

    conversation: Conversation
    user_id: uuid.UUID
    session_id: uuid.UUID
    latest_seq: int
    texts: dict[str, str]
    facts: dict[str, list[str]]


async def load_conversation(db: Database, conversation: Conversation) -> LoadedConversation:
    """Write a conversation as one chat session through the normal message path (one transaction)."""
    from backend.repo.chat import NewMessage, append_message, create_session
    from backend.repo.identity import create_user

    async with db.transaction() as s:
        user = await create_user(s, f"eval-{conversation.id}-{uuid.uuid4().hex[:8]}@example.org", "Eval")
        chat = await create_session(s, user.id, title=f"eval {conversation.id}")
        seq = 0
        for session, turn in conversation.turns():
            seq += 1
            at = datetime(session.date.year, session.date.month, session.date.day, 18, tzinfo=UTC)
            await append_message(
                s, user.id, chat.id, NewMessage(turn.role, turn.text, created_at=at + timedelta(seconds=seq))
            )
    return LoadedConversation(
        conversation,
        user.id,
        chat.id,
        seq,
        {t.id: t.text for _, t in conversation.turns()},
        {t.id: t.facts for _, t in conversation.turns()},
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


async def timed_select(
    db: Database,
    strategy: MessageScopingStrategy,
    loaded: LoadedConversation,
    query: str,
    budget: int,
    counter: TokenCounter,
    settings: Settings,
) -> tuple[list[ScopedMessage], float, float]:
    async with db.transaction() as s:
        ctx = ScopingContext(
            agent="coach",
            session_id=loaded.session_id,
            history=DbHistory(s, loaded.session_id, loaded.latest_seq),
            query=query,
            budget=budget,
            counter=counter,
            settings=settings,
            summaries=SummaryStore(s),
            summarizer=ExtractiveSummarizer(counter),
        )
        wall, cpu = time.perf_counter(), time.process_time()
        result = await strategy.select(ctx)
        return result.messages, time.perf_counter() - wall, time.process_time() - cpu


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
