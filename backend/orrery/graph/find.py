"""Find a project's entities by the words of their name (`find_entities`), so an assistant can
answer about "the legal review" without the focus or an id; with no words, the open tasks that
are ready first (the project's "what's next").

Two statements whatever the project's size: the candidates (name matches, at most `CANDIDATES`),
each with its unfinished dependencies and open dependents counted in correlated subqueries, then the
plans each belongs to. Their fixed parts are built once per process (`_statements`): building the
aliased subqueries cost ~4 ms a call, more than running both statements.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache

from sqlalchemy import ColumnElement, Select, String, bindparam, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from sqlalchemy.sql.selectable import ScalarSelect

from orrery.db.models import Edge, Entity
from orrery.graph.relation_roles import DONE_STATES
from orrery.repo.scope import require_project
from orrery.text import search_terms, stem

CANDIDATES = 200
"""Name matches read before ranking; a word as common as "the" is not a search term."""


@dataclass(frozen=True)
class Found:
    """One entity with what a "when / what state / what's next" answer needs."""

    id: uuid.UUID
    kind: str
    name: str
    state: str
    due_at: datetime | None
    open_dependencies: int
    open_dependents: int
    plans: tuple[str, ...] = ()


def _counted(rel_from: str) -> ScalarSelect[int]:
    """Correlated count of open entities on the other end of `depends_on` edges."""
    edge, other = aliased(Edge), aliased(Entity)
    mine, theirs = (edge.src_id, edge.dst_id) if rel_from == "src" else (edge.dst_id, edge.src_id)
    return (
        select(func.count())
        .select_from(edge)
        .join(other, other.id == theirs)
        .where(mine == Entity.id, edge.rel == "depends_on", other.state.not_in(DONE_STATES))
        .correlate(Entity)
        .scalar_subquery()
    )


Candidates = Select[uuid.UUID, str, str, str, datetime | None, int, int]
"""id, kind, name, state, due_at, open dependencies, open dependents"""


@cache
def _statements() -> tuple[Candidates, Select[uuid.UUID, str]]:
    """The candidates' columns (their counts included) and the plans of given entities (`ids`, bound
    per call): constant, so built once per process."""
    candidates = select(
        Entity.id,
        Entity.kind,
        Entity.name,
        Entity.state,
        Entity.due_at,
        _counted("src").label("deps"),
        _counted("dst").label("dependents"),
    )
    plan = aliased(Entity)
    plans = (
        select(Edge.src_id, plan.name)
        .join(plan, plan.id == Edge.dst_id)
        .where(Edge.src_id.in_(bindparam("ids", expanding=True)), Edge.rel == "belongs_to_plan")
        .order_by(plan.name)
    )
    return candidates, plans


@lru_cache(maxsize=32)
def _named(words: int) -> ColumnElement[bool]:
    """A name holding any of `words` roots (bound per call as `root0`, `root1`, ...): built once per
    count of words, as building `lower(name) LIKE` per word cost more than the search."""
    name = func.lower(Entity.name)
    return or_(*(name.contains(bindparam(f"root{i}", type_=String)) for i in range(words)))


def _root(word: str) -> str:
    """The part a word shares with its stem (`pricing`/`price` -> `pric`): what its forms contain."""
    return os.path.commonprefix([word.lower(), stem(word)]) or word.lower()


def _rank(words: list[str], found: Found) -> tuple[float, ...]:
    if not words:  # the project's next work: ready first, in progress first, what unblocks most
        return (found.open_dependencies > 0, found.state != "in_progress", -found.open_dependents)
    wanted = {stem(w) for w in words}
    have = {stem(w) for w in search_terms(found.name)}
    shared = len(wanted & have)
    return (-shared, len(have - wanted), found.kind != "task")


async def find_entities(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID,
    query: str,
    *,
    kind: str | None = None,
    limit: int = 10,
) -> list[Found]:
    """The project's entities whose names share the most words with `query` (fewest other words
    first; tasks before other kinds on a tie); with no words, its open tasks, ready ones first."""
    project = await require_project(session, user_id, project_id)
    words = search_terms(query)
    stmt = _statements()[0].where(Entity.project_id == project.id)
    if kind:
        stmt = stmt.where(Entity.kind == kind)
    roots = {f"root{i}": _root(w) for i, w in enumerate(words)}
    if words:
        stmt = stmt.where(_named(len(words)))
    else:
        stmt = stmt.where(Entity.kind == "task", Entity.state.not_in(DONE_STATES))
    rows = (await session.execute(stmt.order_by(Entity.name, Entity.id).limit(CANDIDATES), roots)).all()
    found = [
        Found(r.id, r.kind, r.name, r.state, r.due_at, int(r.deps or 0), int(r.dependents or 0)) for r in rows
    ]
    if words:
        found = [f for f in found if _rank(words, f)[0] < 0]
    chosen = sorted(found, key=lambda f: _rank(words, f))[:limit]
    return await _with_plans(session, chosen)


async def _with_plans(session: AsyncSession, found: list[Found]) -> list[Found]:
    if not found:
        return []
    rows = await session.execute(_statements()[1], {"ids": [f.id for f in found]})
    plans: dict[uuid.UUID, list[str]] = {}
    for src, name in rows.all():
        plans.setdefault(src, []).append(name)
    return [
        Found(
            f.id,
            f.kind,
            f.name,
            f.state,
            f.due_at,
            f.open_dependencies,
            f.open_dependents,
            tuple(plans.get(f.id, ())),
        )
        for f in found
    ]
