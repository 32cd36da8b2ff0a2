"""build_context's candidates: breadth-first over edges as plain rows, scored in one pass.

One query per level fetches, for every edge touching the frontier (both directions), the far entity's
columns as plain values: its id as text (no UUID objects), its age in days and its reference count
(incoming edges) computed by the database. No ORM objects, no separate reference-count query; the
score is then one pass over the rows: distance, recency, references and type are arithmetic on
those columns, and content similarity is BM25 over the candidates' names and descriptions.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    Integer,
    String,
    Text,
    case,
    cast,
    extract,
    false,
    func,
    literal,
    or_,
    select,
    type_coerce,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from orrery.db.base import UTCDateTime
from orrery.db.models import Edge
from orrery.graph import context_render as render
from orrery.graph.edges import both_directions, far_entity
from orrery.text import analyze, bm25_scores

FRONTIER_CAP = 500
DEPTH_PEEK_LIMIT = 200
PEEK_FRONTIER = 100
"""The peek past the depth limit starts from at most this many frontier nodes (it only reports)."""
RECENCY_HALF_LIFE_DAYS = 30.0
TYPE_WEIGHT = {
    "goal": 1.0,
    "milestone": 0.9,
    "plan": 0.85,
    "task": 0.8,
    "kb_entry": 0.75,
    "document": 0.7,
    "output": 0.6,
}
CHAIN_RELATIONS = frozenset(
    ("depends_on", "belongs_to_plan", "supports_goal", "requires", "achieved_by", "targets_milestone")
)
ACTIVE = frozenset(("active", "in_progress"))
FACTORS = ("distance", "recency", "references", "type", "content")


@dataclass(slots=True)
class Candidate:
    """A node reached by traversal, with how it was reached and how it scored."""

    node: render.Node
    distance: int
    relation: str
    direction: str
    via: render.Node
    """The node it was reached from."""
    score: float = 0.0
    raw: tuple[float, ...] = ()
    """Distance, recency, references, type and content factors, unrounded."""
    refs: int = 0
    """Incoming edges of the node (the references factor)."""
    chars: int = 0
    """Length of its name and description (estimates its length in words for BM25)."""
    words: list[str] | None = None
    """Its name and description tokenized; only for candidates that contain a query term."""

    @property
    def factors(self) -> dict[str, float]:
        """The score's factors, rounded, by name."""
        return {name: round(value, 4) for name, value in zip(FACTORS, self.raw, strict=True)}


def uuid_text(column: Any, dialect: str) -> Any:
    """A UUID column as canonical text (`8-4-4-4-12`), computed by the database."""
    if dialect != "sqlite":
        return cast(column, Text)
    raw = type_coerce(column, String)  # stored as 32 hex digits
    parts = [
        func.substr(raw, start, length) for start, length in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
    ]
    return func.printf("%s-%s-%s-%s-%s", *parts)


def age_days(column: Any, now: datetime, dialect: str) -> Any:
    """Days between `column` and `now`, computed by the database."""
    at = literal(now, UTCDateTime())
    if dialect == "sqlite":
        return type_coerce(func.julianday(at) - func.julianday(column), Float)
    return type_coerce(extract("epoch", at - column) / 86_400.0, Float)


def stem_prefix(stem: str) -> str:
    """A prefix every word with this (Snowball) stem starts with: the stem less its last letter (it
    may be a `y` turned `i`), two for short stems (`lying` -> `lie`). Checked on 95,000 words."""
    return stem[:-1] if len(stem) >= 4 else stem[: max(1, len(stem) - 2)]


async def neighbours(
    session: AsyncSession,
    frontier: Sequence[uuid.UUID],
    relations: list[str] | None,
    now: datetime,
    terms: Sequence[str] = (),
    skip: Sequence[uuid.UUID] = (),
) -> list[Any]:
    """Edges touching the frontier, both directions, with the far entity as plain values: one query.

    Far entities in `skip` (the seeds: every neighbour links back to them) are left out in SQL.

    `hit` says whether the name or description contains a query stem's prefix (a superset of the
    rows whose words share a stem with the query): only those rows are analyzed for content scoring.
    """
    dialect = session.get_bind().dialect.name
    other = far_entity()
    incoming = aliased(Edge)
    refs = select(func.count()).where(incoming.dst_id == other.id).scalar_subquery()
    text = func.lower(other.name + literal(" ") + func.coalesce(other.description, ""))
    hit = case((or_(*(text.contains(stem_prefix(t)) for t in terms)), 1), else_=0) if terms else false()
    columns = [
        uuid_text(other.id, dialect).label("id"),
        other.kind,
        other.name,
        other.state,
        other.type_key,
        other.description,
        age_days(other.updated_at, now, dialect).label("age_days"),
        refs.label("refs"),
        type_coerce(
            func.length(other.name) + func.coalesce(func.length(other.description), 0), Integer
        ).label("chars"),
        type_coerce(hit, Integer).label("hit"),
    ]
    where = [other.is_scratch.is_(False), other.id.not_in(skip)]
    where += [Edge.rel.in_(relations)] if relations else []
    out, inc = both_directions(frontier, other, columns, where, near_text=lambda c: uuid_text(c, dialect))
    return list((await session.execute(union_all(out, inc))).all())


async def peek_ids(
    session: AsyncSession, frontier: Sequence[uuid.UUID], relations: list[str] | None
) -> list[str]:
    """Ids one level past the depth limit (at most DEPTH_PEEK_LIMIT): one query."""
    dialect = session.get_bind().dialect.name
    other = far_entity()
    where = [other.is_scratch.is_(False)] + ([Edge.rel.in_(relations)] if relations else [])
    out, inc = both_directions(
        frontier,
        other,
        [uuid_text(other.id, dialect).label("id")],
        where,
        near_text=lambda c: uuid_text(c, dialect),
    )
    rows = await session.execute(union_all(out, inc).limit(DEPTH_PEEK_LIMIT))
    return [row.id for row in rows]


async def traverse(
    session: AsyncSession,
    seeds: list[render.Node],
    depth: int,
    fanout: int | None,
    expand_on_match: bool,
    relations: list[str] | None,
    terms: list[str],
    now: datetime,
    skip_incoming: tuple[str, ...] = (),
) -> tuple[dict[str, Candidate], list[str], int]:
    """Candidates by id, ids cut by the depth limit, and the queries it took. Links of a relation in
    `skip_incoming` that point at the node reached from are not followed (a plan's tasks)."""
    visited = {s.id for s in seeds}
    candidates: dict[str, Candidate] = {}
    names = {s.id: s for s in seeds}
    seed_ids = frontier = [uuid.UUID(s.id) for s in seeds]
    query_terms = set(terms)
    trips = 0
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = await neighbours(session, frontier, relations, now, sorted(query_terms), seed_ids)
        rows = [r for r in rows if r.direction == "outgoing" or r.relation not in skip_incoming]
        trips += 1
        nxt: list[str] = []
        for (
            from_id,
            relation,
            direction,
            rid,
            kind,
            name,
            state,
            type_key,
            desc,
            age,
            refs,
            chars,
            hit,
        ) in _fanout(rows, fanout):
            if rid in visited:
                continue
            visited.add(rid)
            node = names[rid] = render.Node(
                rid, kind, name, state, type_key, desc, None, age if age and age > 0 else 0.0
            )
            words = analyze(f"{name} {desc or ''}") if hit else None
            candidates[rid] = Candidate(
                node, level, relation, direction, names[from_id], 0.0, (), refs, chars, words
            )
            if not expand_on_match or not query_terms or query_terms.intersection(words or ()):
                nxt.append(rid)
        frontier = [uuid.UUID(i) for i in nxt[:FRONTIER_CAP]]
    depth_cut = await _depth_cut(session, frontier, relations, visited) if frontier else []
    return candidates, depth_cut, trips + bool(frontier)


async def _depth_cut(
    session: AsyncSession, frontier: list[uuid.UUID], relations: list[str] | None, visited: set[str]
) -> list[str]:
    """The ids one level past the depth limit, not yet visited (one query)."""
    depth_cut: list[str] = []
    for rid in await peek_ids(session, frontier[:PEEK_FRONTIER], relations):
        if rid not in visited and rid not in depth_cut:
            depth_cut.append(rid)
    return depth_cut


def _fanout(rows: list[Any], fanout: int | None) -> list[Any]:
    """At most `fanout` links per node: chain relations first, then active items, then newest."""
    if fanout is None:
        return rows
    by_from: dict[str, list[Any]] = {}
    for row in rows:
        by_from.setdefault(row.from_id, []).append(row)
    kept = []
    for group in by_from.values():
        group.sort(key=lambda r: (r.relation not in CHAIN_RELATIONS, r.state not in ACTIVE, r.age_days))
        kept.extend(group[:fanout])
    return kept


def score(cands: list[Candidate], weights: dict[str, float], terms: list[str]) -> None:
    """Every candidate's factors and weighted score, in one pass over plain values.

    BM25 runs over the candidates that contain a query term; the rest score zero on content. The
    corpus is all candidates, its average length estimated from characters (words per character
    measured on the tokenized ones).
    """
    content = dict.fromkeys(range(len(cands)), 0.0)
    matching = [i for i, c in enumerate(cands) if c.words]
    if terms and matching:
        words_per_char = sum(len(cands[i].words or ()) for i in matching) / (
            sum(cands[i].chars for i in matching) or 1
        )
        avg_len = words_per_char * sum(c.chars for c in cands) / len(cands)
        documents = [cands[i].words or [] for i in matching]
        doc_freq = Counter(t for d in documents for t in set(d))  # the others contain no query term
        scores = bm25_scores(terms, documents, corpus=(len(cands), avg_len, doc_freq))
        content.update(zip(matching, scores, strict=True))
    top_content = max(content.values(), default=0.0) or 1.0
    top_refs = math.log1p(max((c.refs for c in cands), default=0)) or 1.0
    w = tuple(weights[name] for name in FACTORS)
    decay = math.log(0.5) / RECENCY_HALF_LIFE_DAYS
    for i, c in enumerate(cands):
        raw = (
            1.0 / c.distance,
            math.exp(decay * c.node.age_days),
            math.log1p(c.refs) / top_refs,
            TYPE_WEIGHT.get(c.node.kind, 0.5),
            content[i] / top_content,
        )
        c.raw = raw
        c.score = round(sum(wi * fi for wi, fi in zip(w, raw, strict=True)), 4)
