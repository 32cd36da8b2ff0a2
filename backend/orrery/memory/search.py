"""On-demand recall: `search_memory`, the model's (and the person's) search of their earlier chats.

It is recall (`orrery.memory.recall`) asked for a query instead of the turn's message: the same
candidates and scoping (the person's own chats, `remember` on, recall on, the project rule), the
same one ranking, the same fitting and quoting, the same receipt. Around it: an optional date range
(by each excerpt's message date) and one named chat, applied to what recall ranked; and its own
budget (`budget_search_memory`), since a tool result is not a prompt section.

The chat being answered is never searched (its own messages are the conversation, which the
working context already scopes); naming it says so. A named chat must be the person's own (else
"not found"), and is searched in its own project, so the person can reach any chat of theirs by id.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.errors import NotFoundError, ValidationError
from orrery.memory.recall import Fitted, RecallPool, RecallRequest, Scope, fit, gather
from orrery.repo.chat import find_session
from orrery.repo.scope import as_uuid
from orrery.sections import ReceiptItem
from orrery.tokens import counter_for

NO_CHAT = uuid.UUID(int=0)
"""The chat excluded when the search is not asked from a chat (MCP, the HTTP tools door, the CLI)."""
MAX_QUERY = 2_000
"""Most characters of a query (a question, not a document)."""


@dataclass(frozen=True)
class SearchRequest:
    """Who searches, from which chat (never searched) and project, for what, in which range/chat."""

    user_id: uuid.UUID
    query: str
    project_id: uuid.UUID | None = None
    current_chat: uuid.UUID | None = None
    focus: tuple[str, uuid.UUID] | None = None
    since: str | None = None
    until: str | None = None
    chat_id: str | None = None


@dataclass
class MemorySearch:
    """What the search found: the text the model reads (excerpts, or why there are none), its
    tokens and budget, and the receipt (recall's items: which chat, which seq, why)."""

    text: str
    budget: int
    tokens: int = 0
    status: str = ""
    """Why nothing was found, when nothing was ('' when excerpts were)."""
    included: list[ReceiptItem] = field(default_factory=list)
    excluded: list[ReceiptItem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The structured result every door gives (JSON-ready)."""
        return {
            "result": self.text,
            "status": self.status,
            "tokens": self.tokens,
            "budget": self.budget,
            "included": [asdict(i) for i in self.included],
            "excluded": [asdict(i) for i in self.excluded],
        }


@dataclass(frozen=True)
class DateRange:
    """Message times from `start` (inclusive) to `end` (exclusive); None: open."""

    start: datetime | None = None
    end: datetime | None = None

    def holds(self, when: datetime | None) -> bool:
        if when is None:
            return self.start is None and self.end is None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        return (self.start is None or when >= self.start) and (self.end is None or when < self.end)


def _moment(value: str | None, name: str, *, end: bool) -> datetime | None:
    """`YYYY-MM-DD` (the whole day: `until` includes it) or an ISO timestamp (UTC unless zoned)."""
    if value is None or not value.strip():
        return None
    raw = value.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime.combine(day + timedelta(days=1) if end else day, time(), UTC)
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise ValidationError(
            f"{name} {raw[:40]!r} is not a date; use YYYY-MM-DD (or an ISO timestamp)",
        ) from None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when + timedelta(microseconds=1) if end else when


def date_range(since: str | None, until: str | None) -> DateRange:
    """The range `since`..`until` (both inclusive), or a `ValidationError` the caller can act on."""
    start, end = _moment(since, "since", end=False), _moment(until, "until", end=True)
    if start is not None and end is not None and start >= end:
        raise ValidationError(f"since ({since}) is after until ({until}): give an earlier since")
    return DateRange(start, end)


def _query(text: str) -> str:
    query = " ".join(text.split())
    if not query:
        raise ValidationError("query is empty: say what to look for in earlier chats")
    if len(query) > MAX_QUERY:
        raise ValidationError(f"query is longer than {MAX_QUERY} characters: shorten it")
    return query


async def search_memory(session: AsyncSession, request: SearchRequest, settings: Settings) -> MemorySearch:
    """Excerpts of the person's earlier chats most related to `request.query`, within the budget."""
    query, within = _query(request.query), date_range(request.since, request.until)
    budget = settings.budget_search_memory
    project, chat = request.project_id, None
    if request.chat_id is not None and request.chat_id.strip():
        chat = as_uuid(request.chat_id.strip(), "chat")
        found = await find_session(session, request.user_id, chat)
        if found is None:
            raise NotFoundError("chat", chat)
        if found.id == request.current_chat:
            return _nothing("that is the current chat: its messages are this conversation", budget)
        if not found.remember:
            return _nothing("that chat is set not to be remembered, so it is never searched", budget)
        project = found.project_id
    scope = Scope(request.user_id, request.current_chat or NO_CHAT, project)
    pool = await gather(session, RecallRequest(scope, request.focus, query), settings)
    if not pool.offered:
        return _nothing(_why_empty(pool), budget)
    kept, narrowed = _narrowed(pool, within, chat)
    fitted = fit(kept, budget, counter_for(settings.model), query)
    if not fitted.text:
        matched = bool(kept.offered)
        why = "nothing fits the result budget" if matched else "nothing matched in that chat or date range"
        return _nothing(why, budget, fitted)
    excluded = [*(_for_query(i) for i in fitted.excluded), *_narrowed_item(narrowed)]
    included = [_for_query(i) for i in fitted.included]
    return MemorySearch(fitted.text, budget, fitted.tokens, "", included, excluded)


def _for_query(item: ReceiptItem) -> ReceiptItem:
    """Recall's reason, worded for a search: the words are the query's, not a message's."""
    return replace(item, reason=item.reason.replace("with the message", "with the query"))


def _why_empty(pool: RecallPool) -> str:
    status = pool.status.removeprefix("off: ")
    return status or "no message of an earlier chat is related to the query"


def _nothing(why: str, budget: int, fitted: Fitted | None = None) -> MemorySearch:
    text = f"No excerpts from earlier chats: {why}."
    excluded = list(fitted.excluded) if fitted else []
    return MemorySearch(text, budget, status=why, excluded=excluded)


def _narrowed(pool: RecallPool, within: DateRange, chat: uuid.UUID | None) -> tuple[RecallPool, int]:
    """The pool with only the units in `chat` dated within the range (by their first message), and
    how many related units that left out."""
    if chat is None and within.start is None and within.end is None:
        return pool, 0
    kept = [
        u
        for u in pool.offered
        if (chat is None or u.chat.id == chat) and within.holds(u.messages[0].created_at)
    ]
    left = len(pool.offered) - len(kept)
    return RecallPool(kept, len(kept), len(kept), notes=list(pool.notes), queries=pool.queries), left


def _narrowed_item(left: int) -> Sequence[ReceiptItem]:
    if not left:
        return ()
    why = "outside the chat or dates asked"
    return [ReceiptItem("earlier_messages", f"{left} other related units", None, why)]
