"""Long-term memory (tier 3): profile, active goals, remembered facts, learned summary, engagement.

One query reads the user, profile, summary and the latest check-in together (outer joins and a
scalar subquery), joined to the active goals and the current remembered facts (one row each, a
`UNION ALL`). The count does not grow with goals, facts or check-ins.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import (
    Integer,
    String,
    Uuid,
    bindparam,
    case,
    func,
    literal_column,
    null,
    nulls_last,
    select,
    true,
    type_coerce,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import UTCDateTime, utcnow
from orrery.db.direct import Direct
from orrery.db.models import CheckIn, Entity, Fact, User, UserProfile, UserSummary
from orrery.errors import NotFoundError, ValidationError
from orrery.repo.scope import member_project_ids
from orrery.vocabulary import GOAL_TYPES, GoalType

MAX_GOALS_FOR_CONTEXT = 10
MAX_FACTS_FOR_CONTEXT = 40
"""The newest current facts read per turn; the `facts` budget decides how many reach the prompt."""
MAX_STANDING_FOR_CONTEXT = 40
"""The newest current standing instructions and preferences read per turn (the `instructions`
budget decides how many reach the prompt, ranked by relevance to the message when over it)."""
FACT_RANK = 1_000_000
"""Facts rank after every goal in the joined rows."""
STANDING_RANK = 2_000_000
"""Standing instructions and preferences rank after the facts."""
STANDING_KINDS = ("instruction", "preference")
ACTIVE_GOAL_STATES = ("active", "in_progress")
EngagementStatus = Literal["new", "engaged", "returning"]


@dataclass(frozen=True)
class UserProfileView:
    """Who the person is."""

    id: uuid.UUID
    email: str
    display_name: str
    preferred_name: str | None
    timezone: str
    bio: str | None
    created_at: datetime


@dataclass(frozen=True)
class GoalSummary:
    """An active goal, as much as a prompt needs."""

    id: uuid.UUID
    title: str
    status: str
    goal_type: GoalType | None
    due_at: datetime | None


@dataclass(frozen=True)
class FactView:
    """A current remembered fact, as much as a prompt needs (ids let the model supersede or forget)."""

    id: uuid.UUID
    text: str
    subject: str | None
    valid_from: datetime | None
    created_at: datetime
    kind: str = "fact"
    """`fact`, or a standing `instruction` / `preference`."""
    everywhere: bool = True
    """A standing one said to hold in every project (not only this chat's)."""


@dataclass(frozen=True)
class UserSummaryContext:
    """What has been learned about the person."""

    patterns: list[str]
    wins: list[str]
    struggles: list[str]
    last_updated: datetime | None


@dataclass(frozen=True)
class EngagementContext:
    """How recently the person showed up."""

    status: EngagementStatus
    days_since_last_check_in: int | None
    last_check_in_at: str | None
    """ISO-8601 timestamp of the latest check-in."""


@dataclass(frozen=True)
class LongTermMemory:
    """Everything tier 3 contributes to a turn."""

    user_profile: UserProfileView
    goals: list[GoalSummary]
    user_summary: UserSummaryContext | None
    engagement: EngagementContext
    facts: list[FactView] = field(default_factory=list)
    """Current remembered facts, newest first (superseded ones are history, never here)."""
    standing: list[FactView] = field(default_factory=list)
    """Current standing instructions and preferences that hold in this chat's project, newest first."""


def parse_goal_type(value: str | None) -> GoalType | None:
    """Validate a stored goal type at runtime instead of trusting a cast."""
    if value is None:
        return None
    if value not in GOAL_TYPES:
        raise ValidationError(f"goal_type {value!r} is not one of {', '.join(GOAL_TYPES)}")
    goal_type: GoalType = value  # type: ignore[assignment]  # narrowed by the check above
    return goal_type


def engagement_from(
    last: datetime | None, now: datetime, threshold_days: int, earlier: datetime | None = None
) -> EngagementContext:
    """`new` until the person has checked in twice (a day with a chat counts once: one chat is no
    habit yet, issue 52); then `engaged` within `threshold_days` of the latest, `returning` after.
    `earlier`: the check-in before the latest (None: fewer than two)."""
    if last is None:
        return EngagementContext("new", None, None)
    days = max(0, (now - last).days)
    if earlier is None:
        return EngagementContext("new", days, last.isoformat())
    status: EngagementStatus = "engaged" if days <= threshold_days else "returning"
    return EngagementContext(status, days, last.isoformat())


async def fetch_long_term_memory(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    project_id: uuid.UUID | None = None,
    threshold_days: int = 3,
    now: datetime | None = None,
) -> LongTermMemory:
    """Profile, goals (the session's project first), summary and engagement for one user, in one
    round trip: the user's row joined to their top goals (one row per goal). Columns, not mapped
    objects: only views are built from them, and loading three entities a turn cost ~0.5 ms."""
    query = _MEMORY_IN_PROJECT if project_id else _MEMORY
    params = {"user_id": user_id, "project_id": project_id} if project_id else {"user_id": user_id}
    rows = await query.rows(session, params)
    if not rows:
        raise NotFoundError("user", user_id)
    first = rows[0]
    if first.profile_user_id is None:
        raise NotFoundError("user profile", user_id)
    return LongTermMemory(
        user_profile=UserProfileView(
            id=first.id,
            email=first.email,
            display_name=first.display_name,
            preferred_name=first.preferred_name,
            timezone=first.timezone,
            bio=first.bio,
            created_at=first.created_at,
        ),
        goals=[
            GoalSummary(g.goal_id, g.name, g.state, parse_goal_type(g.goal_type), g.due_at)
            for g in rows
            if g.item == "goal"
        ],
        user_summary=_summary(first),
        engagement=engagement_from(
            first.last_check_in, now or utcnow(), threshold_days, first.earlier_check_in
        ),
        facts=[FactView(f.goal_id, f.name, f.state, f.due_at, f.noted) for f in rows if f.item == "fact"],
        standing=[
            FactView(f.goal_id, f.name, f.state, None, f.noted, f.item, f.goal_type == "global")
            for f in rows
            if f.item in STANDING_KINDS
        ],
    )


def _memory_query(in_project: bool) -> Any:
    """The statement of `fetch_long_term_memory`, built once per process (ids bound per call): the
    user, profile, summary and last check-in, joined to their top active goals, ranked: the session's
    project first (`in_project`), then the nearest due date, then recently touched."""
    user_id = bindparam("user_id", type_=Uuid())
    order: list[Any] = [nulls_last(Entity.due_at.asc()), Entity.updated_at.desc(), Entity.id]
    if in_project:
        order.insert(0, case((Entity.project_id == bindparam("project_id", type_=Uuid()), 0), else_=1))
    goals = _items(user_id, order, in_project)
    last_check_in = type_coerce(
        select(func.max(CheckIn.created_at)).where(CheckIn.user_id == User.id).scalar_subquery(),
        UTCDateTime(),
    )
    earlier_check_in = type_coerce(  # the one before the latest: is there a second check-in at all?
        select(CheckIn.created_at)
        .where(CheckIn.user_id == User.id)
        .order_by(CheckIn.created_at.desc())
        .limit(1)
        .offset(1)
        .scalar_subquery(),
        UTCDateTime(),
    )
    return (
        select(
            User.id,
            User.email,
            User.display_name,
            User.created_at,
            UserProfile.user_id.label("profile_user_id"),
            UserProfile.preferred_name,
            UserProfile.timezone,
            UserProfile.bio,
            UserSummary.user_id.label("summary_user_id"),
            UserSummary.patterns,
            UserSummary.wins,
            UserSummary.struggles,
            UserSummary.updated_at.label("summary_updated_at"),
            last_check_in.label("last_check_in"),
            earlier_check_in.label("earlier_check_in"),
            goals.c.item,
            goals.c.id.label("goal_id"),
            goals.c.name,
            goals.c.state,
            goals.c.goal_type,
            goals.c.due_at,
            goals.c.noted,
        )
        .outerjoin(UserProfile, UserProfile.user_id == User.id)
        .outerjoin(UserSummary, UserSummary.user_id == User.id)
        .outerjoin(goals, true())
        .where(User.id == user_id)
        .order_by(goals.c.rank)
    )


def _items(user_id: Any, order: list[Any], in_project: bool) -> Any:
    """The top active goals (`item` "goal"), the newest current facts (`item` "fact": text in
    `name`, subject in `state`, valid_from in `due_at`) and the newest standing instructions and
    preferences of this project or every project (`item` their kind, `goal_type` "global" or
    "project"), one row each, goals first."""
    goals = (
        select(
            literal_column("'goal'", String()).label("item"),
            Entity.id,
            Entity.name,
            Entity.state,
            Entity.goal_type,
            Entity.due_at,
            Entity.created_at.label("noted"),
            func.row_number().over(order_by=order).label("rank"),
        )
        .where(
            Entity.kind == "goal",
            Entity.state.in_(ACTIVE_GOAL_STATES),
            Entity.project_id.in_(member_project_ids(user_id)),
        )
        .order_by(*order)
        .limit(MAX_GOALS_FOR_CONTEXT)
        .subquery("top_goals")
    )
    newest: list[Any] = [Fact.created_at.desc(), Fact.id]
    facts = (
        select(
            literal_column("'fact'", String()).label("item"),
            Fact.id,
            Fact.text.label("name"),
            Fact.subject.label("state"),
            type_coerce(null(), Entity.goal_type.type).label("goal_type"),
            Fact.valid_from.label("due_at"),
            Fact.created_at.label("noted"),
            (literal_column(str(FACT_RANK), Integer()) + func.row_number().over(order_by=newest)).label(
                "rank"
            ),
        )
        .where(Fact.user_id == user_id, Fact.superseded_at.is_(None), Fact.kind == "fact")
        .order_by(*newest)
        .limit(MAX_FACTS_FOR_CONTEXT)
        .subquery("top_facts")
    )
    return union_all(select(goals), select(facts), select(_standing(user_id, in_project))).subquery("goals")


def _standing(user_id: Any, in_project: bool) -> Any:
    """The newest current standing instructions and preferences that hold in the chat's project
    (a chat outside any project: the global ones)."""
    newest: list[Any] = [Fact.created_at.desc(), Fact.id]
    applies: Any = Fact.project_id.is_(None)
    if in_project:
        applies = applies | (Fact.project_id == bindparam("project_id", type_=Uuid()))
    scope = case((Fact.project_id.is_(None), "global"), else_="project")
    return (
        select(
            type_coerce(Fact.kind, String()).label("item"),
            Fact.id,
            Fact.text.label("name"),
            Fact.subject.label("state"),
            type_coerce(scope, Entity.goal_type.type).label("goal_type"),
            Fact.valid_from.label("due_at"),
            Fact.created_at.label("noted"),
            (literal_column(str(STANDING_RANK), Integer()) + func.row_number().over(order_by=newest)).label(
                "rank"
            ),
        )
        .where(Fact.user_id == user_id, Fact.superseded_at.is_(None), Fact.kind.in_(STANDING_KINDS), applies)
        .order_by(*newest)
        .limit(MAX_STANDING_FOR_CONTEXT)
        .subquery("top_standing")
    )


_MEMORY = Direct(_memory_query(in_project=False))
_MEMORY_IN_PROJECT = Direct(_memory_query(in_project=True))


def _summary(row: Any) -> UserSummaryContext | None:
    if row.summary_user_id is None:
        return None
    return UserSummaryContext(
        patterns=[str(p) for p in row.patterns],
        wins=[str(w) for w in row.wins],
        struggles=[str(s) for s in row.struggles],
        last_updated=row.summary_updated_at,
    )
