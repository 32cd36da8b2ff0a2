"""The view one turn's conversation selection reads: the history up to that turn, the query,
the conversation budget and the summary store.

Chat turns, `orrery context show`, the context endpoint and strategy comparisons all build it here,
so a strategy sees the same inputs whichever door asks. `through_seq` rebuilds the view a past
turn had: the history cut at that user message, which is also the query.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.models import ChatSession, Message
from orrery.errors import ValidationError
from orrery.memory.embedding_models import embedding_model
from orrery.memory.history import DbHistory
from orrery.memory.scoping import ScopingContext
from orrery.memory.scoping.base import ScopedMessage
from orrery.memory.summaries import StoredSummary, Summarizer, SummaryStore, default_summarizer
from orrery.tokens import Budgets, TokenCounter, counter_for

UNANSWERED = "(no reply was given to this message: its turn failed)"
"""The note the model reads after a user message whose turn failed (crashed, timed out, errored)."""


class PastSummaries(SummaryStore):
    """The stored summary as a past turn could have read it: one that reaches past what that turn
    kept verbatim was written later, so it is hidden and the strategy rebuilds it (a preview's
    transaction is rolled back, so the rebuilt one is never saved)."""

    def __init__(self, session: AsyncSession, reach: int) -> None:
        super().__init__(session)
        self.reach = reach
        self.hidden: StoredSummary | None = None

    async def get(self, session_id: uuid.UUID) -> StoredSummary | None:
        stored = await super().get(session_id)
        if stored is not None and stored.covered_through_seq > self.reach:
            self.hidden = stored
            return None
        return stored


@dataclass(frozen=True)
class TurnView:
    """What a turn's conversation selection reads: the history up to that turn, its query, the
    budget and the summary store. Chat turns, previews and comparisons all build it here, so a
    strategy sees the same inputs whichever door asks."""

    session_id: uuid.UUID
    history: DbHistory
    query: str | None
    budget: int
    counter: TokenCounter
    settings: Settings
    summaries: SummaryStore

    def scoping_context(
        self, agent: str, options: dict[str, Any], summarizer: Summarizer | None = None
    ) -> ScopingContext:
        """The strategy's input for `agent` with the resolved `options`."""
        return ScopingContext(
            agent=agent,
            session_id=self.session_id,
            history=self.history,
            query=self.query,
            budget=self.budget,
            counter=self.counter,
            settings=self.settings,
            options=options,
            summaries=self.summaries,
            summarizer=summarizer or default_summarizer(self.counter),
        )

    def notes(self) -> list[str]:
        """What a reader of a past turn's view should know (and what ranking could not do: the
        configured embedding model's vectors missing or late)."""
        hidden = getattr(self.summaries, "hidden", None)
        if hidden is None:
            return list(self.history.notes)
        return [
            *self.history.notes,
            f"the stored summary covers seq 1-{hidden.covered_through_seq}, past this turn: "
            "rebuilt for this view, not saved",
        ]


async def turn_view(
    session: AsyncSession,
    chat: ChatSession,
    settings: Settings,
    *,
    through_seq: int | None = None,
    query: str | None = None,
) -> TurnView:
    """The view of the session's next turn, or (`through_seq`) of the past turn that answered
    that user message: history cut there, that message as the query."""
    latest = chat.message_count
    summaries = SummaryStore(session)
    if through_seq is not None:
        latest = await user_turn(session, chat.id, through_seq)
        if latest < chat.message_count:
            summaries = PastSummaries(session, latest - settings.summary_keep_recent)
    history = DbHistory(session, chat.id, latest, embedding_model(settings))  # only its vectors rank
    if query is None:
        newest = await history.recent(1)
        query = newest[0].content if newest and newest[0].role == "user" else None
    counter = counter_for(settings.model)
    budget = Budgets.from_settings(settings).conversation
    return TurnView(chat.id, history, query, budget, counter, settings, summaries)


async def user_turn(session: AsyncSession, chat_id: uuid.UUID, seq: int) -> int:
    """`seq` if it numbers a user message of the session (a past turn's view ends there), else a
    `ValidationError` saying what `at` must be."""
    role = await session.scalar(select(Message.role).where(Message.session_id == chat_id, Message.seq == seq))
    if role != "user":
        raise ValidationError(
            f"at={seq}: no user message has that seq in this session; "
            "`at` must be the seq of a user message (see the session's messages)"
        )
    return seq


async def unanswered_texts(session: AsyncSession, session_id: uuid.UUID, *, live: bool) -> frozenset[str]:
    """The texts of the session's user messages whose turn failed: marked `failed`, or the latest
    message left unanswered by a turn that no live process owns (`live`: its turn lock is held).
    A crash leaves such a message `complete`; the next turn marks it (`turn_store`), a read only
    shows it as what it is."""
    failed = set(
        (
            await session.execute(
                select(Message.content).where(
                    Message.session_id == session_id,
                    Message.role == "user",
                    Message.status == literal_column("'failed'"),  # `ix_messages_failed`'s condition
                    Message.superseded_at.is_(None),  # an edited-away message is no longer in the talk
                )
            )
        ).scalars()
    )
    if not live:
        latest = (
            await session.execute(
                select(Message.role, Message.content, Message.status)
                .where(Message.session_id == session_id, Message.superseded_at.is_(None))
                .order_by(Message.seq.desc())
                .limit(1)
            )
        ).first()
        if latest is not None and latest.role == "user" and latest.status == "complete":
            failed.add(latest.content)
    return frozenset(failed)


def with_unanswered_notes(
    messages: list[ScopedMessage], unanswered: frozenset[str], *, ends_with_query: bool
) -> list[ScopedMessage]:
    """`messages` with the `UNANSWERED` note (as the assistant's turn) after each user message in
    `unanswered` that has no reply after it, never two bare user messages in a row: exactly what the
    model is given. The query a turn answers (`ends_with_query`: the last message) gets none."""
    noted: list[ScopedMessage] = []
    for i, m in enumerate(messages):
        noted.append(m)
        if m["role"] != "user" or (ends_with_query and i == len(messages) - 1):
            continue
        answered = i + 1 < len(messages) and messages[i + 1]["role"] == "assistant"
        if not answered and any(m["content"].endswith(t) for t in unanswered):  # dates prefix the text
            noted.append({"role": "assistant", "content": UNANSWERED})
    return noted
