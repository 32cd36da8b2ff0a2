"""Preview a scoping strategy, or compare several, on one session's turn, storing nothing.

Every door (`orrery context show --strategy/--compare/--at`, `GET /v1/sessions/{id}/context?
scoping=&compare=&at=`, the web inspector's "preview with…") calls this module, so they agree. The
strategies run in a savepoint that is always rolled back: `summary` may extend its stored summary
and auto-context may store a knowledge packet, and neither may persist from a preview.

A comparison runs each strategy's selection on the same view (history, query, budget) and lines up
their receipts per message unit: kept by all, by some (which) or by none, with each strategy's
reason and score. Recall from earlier chats is gathered once and fitted beside each strategy's
selection, in the room it leaves (each strategy's totals say what came).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.context.earlier import EarlierChats, fitted_section, request_for, room
from orrery.context.strategy import resolve_strategy
from orrery.context.working_context import WorkingContext, assemble_working_context
from orrery.errors import ValidationError
from orrery.memory.recall import gather
from orrery.memory.scoping import ReceiptItem, ScopingResult, get_strategy, strategy_names
from orrery.memory.summaries import Summarizer
from orrery.memory.turn_view import turn_view
from orrery.repo.chat import get_session
from orrery.roster import get_agent
from orrery.tokens import Budgets

MAX_COMPARED = 6
"""Each strategy is a full selection (and `summary` may call a model): a preview stays bounded."""
_SPAN = re.compile(r"^seq (\d+)(?:-(\d+))?$")

Agreement = Literal["all", "some", "none"]
GROUPS: tuple[tuple[Agreement, str], ...] = (
    ("some", "only by some"),
    ("all", "kept by all"),
    ("none", "kept by none"),
)
"""How the doors group units: differences first, as they are what a comparison is for."""


@dataclass(frozen=True)
class Verdict:
    """One strategy's decision on one unit."""

    kept: bool
    reason: str
    score: float | None = None


@dataclass(frozen=True)
class UnitRow:
    """One receipt line (usually a message unit) across the compared strategies."""

    kind: str
    key: str
    tokens: int | None
    agreement: Agreement
    kept_by: list[str]
    verdicts: dict[str, Verdict]


@dataclass(frozen=True)
class StrategyTotals:
    """What one strategy selected, in sum."""

    name: str
    ran_as: str
    """What the strategy reports, e.g. `summary -> token_budget` when it fell back."""
    messages: int
    tokens: int
    budget: int
    kept: int
    dropped: int
    notes: list[str]
    earlier_chats_tokens: int = 0
    """What the excerpts from earlier chats took of the room this strategy's selection left."""
    earlier_chats_budget: int = 0
    earlier_chats: list[ReceiptItem] = field(default_factory=list)
    """The excerpts recalled beside this strategy's selection (their receipt lines)."""


@dataclass(frozen=True)
class Comparison:
    """Strategies side by side on the same turn."""

    session_id: uuid.UUID
    agent: str
    at: int | None
    latest_seq: int
    query: str | None
    strategies: list[str]
    totals: list[StrategyTotals]
    units: list[UnitRow]
    notes: list[str]

    def group(self, agreement: Agreement) -> list[UnitRow]:
        """The rows kept by all, some or none of the strategies."""
        return [u for u in self.units if u.agreement == agreement]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@asynccontextmanager
async def discarded(session: AsyncSession) -> AsyncIterator[None]:
    """A savepoint that is always rolled back, so a preview leaves nothing behind."""
    savepoint = await session.begin_nested()
    try:
        yield
    finally:
        if savepoint.is_active:
            await savepoint.rollback()


def parse_names(value: str | Iterable[str]) -> list[str]:
    """Strategy names from `a,b` (or a list of such), deduplicated, each known, 2 to MAX_COMPARED."""
    parts = [value] if isinstance(value, str) else list(value)
    names = list(dict.fromkeys(n.strip() for part in parts for n in part.split(",") if n.strip()))
    if not 2 <= len(names) <= MAX_COMPARED:
        raise ValidationError(
            f"compare needs 2 to {MAX_COMPARED} strategy names, comma-separated "
            f"(e.g. last_n,relevance); known: {', '.join(strategy_names())}"
        )
    return [get_strategy(n).name for n in names]  # an unknown name: a ValidationError listing the known


async def preview_context(
    session: AsyncSession,
    *,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    settings: Settings,
    agent: str | None = None,
    scoping: str | None = None,
    at: int | None = None,
    base_prompt: str | None = None,
    summarizer: Summarizer | None = None,
) -> WorkingContext:
    """The working context with `scoping` (default: as resolved) for the next turn or the turn at
    `at`, assembled as a turn would and then discarded."""
    if scoping:
        get_strategy(scoping)  # fail before any read
    chat = await get_session(session, user_id, session_id)
    name = get_agent(agent or chat.active_agent or "coach").id
    async with discarded(session):
        return await assemble_working_context(
            session,
            agent=name,
            base_prompt=base_prompt,
            session_id=chat.id,
            user_id=user_id,
            settings=settings,
            scoping=scoping,
            through_seq=at,
            summarizer=summarizer,
        )


async def compare_strategies(
    session: AsyncSession,
    *,
    user_id: uuid.UUID,
    session_id: uuid.UUID | str,
    names: str | Iterable[str],
    settings: Settings,
    agent: str | None = None,
    at: int | None = None,
    summarizer: Summarizer | None = None,
) -> Comparison:
    """Run each named strategy on the same view of the turn and line their receipts up."""
    wanted = parse_names(names)
    chat = await get_session(session, user_id, session_id)
    definition = get_agent(agent or chat.active_agent or "coach")
    results: dict[str, ScopingResult] = {}
    async with discarded(session):
        view = await turn_view(session, chat, settings, through_seq=at)
        for name in wanted:
            choice = resolve_strategy(
                definition, settings, session_strategy=chat.scoping_strategy, explicit=name
            )
            ctx = view.scoping_context(definition.id, choice.options, summarizer)
            results[name] = await get_strategy(choice.name).select(ctx)
        notes = view.notes()
        pool = await gather(session, request_for(chat, user_id, view.query), settings)
    budgets = Budgets.from_settings(settings)
    recalled = {
        name: fitted_section(
            pool, room(budgets, sum(i.tokens or 0 for i in r.included)), view.counter, view.query
        )
        for name, r in results.items()
    }
    return Comparison(
        session_id=view.session_id,
        agent=definition.id,
        at=at,
        latest_seq=view.history.latest_seq,
        query=view.query,
        strategies=wanted,
        totals=[_with_earlier(_totals(name, r, view.budget), recalled[name]) for name, r in results.items()],
        units=_rows(results),
        notes=[*notes, *next(iter(recalled.values())).notes] if recalled else notes,
    )


def _with_earlier(totals: StrategyTotals, earlier: EarlierChats) -> StrategyTotals:
    """The strategy's totals with what recall added in the room its selection left."""
    return replace(
        totals,
        budget=totals.budget - earlier.budget,
        earlier_chats_tokens=earlier.fitted.tokens,
        earlier_chats_budget=earlier.budget,
        earlier_chats=list(earlier.fitted.included),
    )


def _totals(name: str, result: ScopingResult, budget: int) -> StrategyTotals:
    return StrategyTotals(
        name=name,
        ran_as=result.strategy or name,
        messages=len(result.messages),
        tokens=sum(i.tokens or 0 for i in result.included),
        budget=budget,
        kept=sum(1 for i in result.included if i.kind == "message"),
        dropped=sum(1 for i in result.excluded if i.kind == "message"),
        notes=list(result.notes),
    )


def _span(key: str) -> tuple[int, int] | None:
    found = _SPAN.match(key)
    if found is None:
        return None
    first = int(found.group(1))
    return first, int(found.group(2) or first)


def _rows(results: dict[str, ScopingResult]) -> list[UnitRow]:
    """One row per receipt line any strategy wrote, in seq order (lines without a seq last); a line
    for messages a strategy never read is left out when another strategy shows them one by one, and
    a count of older units ("12 older units") when another strategy's line names their seqs: the
    same messages are listed once, with each strategy's reason on that row."""
    seen: dict[tuple[str, str], int | None] = {}
    for result in results.values():
        for item in [*result.included, *result.excluded]:
            if seen.get((item.kind, item.key)) is None:
                seen[(item.kind, item.key)] = item.tokens
    units = [s for (kind, key) in seen if kind == "message" and (s := _span(key))]
    spans = any(kind == "messages" and _span(key) for kind, key in seen)
    rows = [
        _row(kind, key, tokens, results)
        for (kind, key), tokens in seen.items()
        if kind != "messages" or not (_shown(_span(key), units) or (spans and _span(key) is None))
    ]
    return sorted(rows, key=_order)


def _order(row: UnitRow) -> tuple[int, bool, int, str]:
    """By first seq, a span (summary, unread messages) before the units it covers; no seq: last."""
    first, last = _span(row.key) or (2**62, 0)
    return first, row.kind == "message", last, row.key


def _shown(span: tuple[int, int] | None, units: list[tuple[int, int]]) -> bool:
    """Whether message rows cover every seq of `span`."""
    if span is None:
        return False
    covered = {seq for first, last in units for seq in range(first, last + 1)}
    return all(seq in covered for seq in range(span[0], span[1] + 1))


def _row(kind: str, key: str, tokens: int | None, results: dict[str, ScopingResult]) -> UnitRow:
    verdicts = {name: _verdict(kind, key, result) for name, result in results.items()}
    kept_by = [name for name, v in verdicts.items() if v.kept]
    agreement: Agreement = "all" if len(kept_by) == len(verdicts) else "some" if kept_by else "none"
    return UnitRow(kind, key, tokens, agreement, kept_by, verdicts)


def _verdict(kind: str, key: str, result: ScopingResult) -> Verdict:
    """The strategy's own line for this unit; else the span line covering it (a summary, messages
    never read); else its line for what it did not read; else "not in its receipt"."""
    for kept, items in ((True, result.included), (False, result.excluded)):
        for item in items:
            if (item.kind, item.key) == (kind, key):
                return Verdict(kept, item.reason, item.score)
    span = _span(key)
    if span is not None and kind == "message":
        for item in [*result.included, *result.excluded]:
            covering = _span(item.key) if item.kind != "message" else None
            if covering and covering[0] <= span[0] and span[1] <= covering[1]:
                return Verdict(False, _covered_reason(item), item.score)
    elif kind == "summary":
        return Verdict(False, "no summary")
    elif span is not None:
        inside = [i for i in result.included if i.kind == "message" and _within(_span(i.key), span)]
        if inside:
            return Verdict(False, f"{len(inside)} unit(s) in this span kept, as their rows show")
    unread = [i for i in result.excluded if i.kind == "messages" and _span(i.key) is None]
    if unread and kind in ("message", "messages"):
        return Verdict(False, "; ".join(f"{i.reason} ({i.key})" for i in unread))
    return Verdict(False, "not in its receipt")


def _within(inner: tuple[int, int] | None, outer: tuple[int, int]) -> bool:
    return inner is not None and outer[0] <= inner[0] and inner[1] <= outer[1]


def _covered_reason(item: ReceiptItem) -> str:
    return f"in the {item.reason}" if item.kind == "summary" else item.reason
