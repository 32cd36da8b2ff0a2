"""The working context's "earlier chats" section: what recall (`orrery.memory.recall`) adds after
the chat's own messages were chosen, within the room they left in the conversation budget, capped
by `budget_earlier_chats`. A chat whose own messages fill the budget pays no query for it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.models import ChatSession
from orrery.memory.recall import Fitted, RecallPool, RecallRequest, Scope, fit, gather
from orrery.memory.turn_view import TurnView
from orrery.sections import ReceiptItem
from orrery.tokens import Budgets, TokenCounter

TITLE = "From earlier chats"


@dataclass(frozen=True)
class EarlierChats:
    """The section's text, the budget it had, its receipt lines and what recall noted."""

    text: str = ""
    budget: int = 0
    fitted: Fitted = field(default_factory=Fitted)
    notes: tuple[str, ...] = ()


def request_for(chat: ChatSession, user_id: uuid.UUID, query: str | None) -> RecallRequest:
    """Recall for `user_id`'s turn in `chat` (which it never recalls from)."""
    focus = (chat.focus_kind, chat.focus_id) if chat.focus_kind and chat.focus_id else None
    return RecallRequest(Scope(user_id, chat.id, chat.project_id), focus, query)


def room(budgets: Budgets, conversation_used: int) -> int:
    """What earlier chats may use: the conversation budget's rest, at most their cap."""
    return max(0, min(budgets.earlier_chats, budgets.conversation - conversation_used))


def fitted_section(pool: RecallPool, budget: int, counter: TokenCounter, query: str | None) -> EarlierChats:
    """The pool fitted to `budget`, with notes saying why nothing came when nothing did."""
    notes = [f"earlier chats: {pool.status}"] if pool.status else []
    fitted = fit(pool, budget, counter, query)
    return EarlierChats(fitted.text, budget, fitted, tuple([*notes, *pool.notes]))


async def earlier_chats(
    session: AsyncSession,
    chat: ChatSession,
    user_id: uuid.UUID,
    view: TurnView,
    budgets: Budgets,
    settings: Settings,
    conversation: Sequence[ReceiptItem],
) -> EarlierChats:
    """The section for this turn, after the chat's own messages (`conversation`, their receipt
    lines) took their part of the budget; no query at all when they leave no room."""
    budget = room(budgets, sum(i.tokens or 0 for i in conversation))
    if budget <= 0:
        reason = "no room: this chat's own messages use the conversation budget"
        return EarlierChats(notes=(f"earlier chats: {reason}",) if budgets.earlier_chats else ())
    pool = await gather(session, request_for(chat, user_id, view.query), settings)
    return fitted_section(pool, budget, view.counter, view.query)
