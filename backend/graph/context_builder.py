"""build_context: the most relevant graph context around seed entities, inside a token budget.

Traversal is breadth-first, one query per level (outgoing and incoming edges joined to the entity
on the far end), plus one query for the seeds, one for reference counts and one that peeks past the
depth limit — a constant number of round trips whatever the number of edges.

Each candidate is scored: distance 30% + recency 20% + references 20% + type 15% + content
similarity to the query 15% (the `semantic` strategy weighs content 50%). Items go in best-first
until the budget, counted exactly on the rendered text, is reached.

The project's best-matching knowledge-base entries (full-text search on the query, or on the seed
names) join as candidates at distance 1, scored on the same scale (`include.knowledge=False` turns
this off).

Strategies change the traversal: `relevance` (depth 2), `breadth` (depth 1, every neighbour),
`depth` (depth 4, the 3 strongest links per node, dependency-like relations first) and `semantic`
(depth 3, expanding only through items that match the query).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import func, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.base import utcnow
from backend.db.models import Edge, Entity
from backend.errors import NotFoundError, ValidationError
from backend.graph import context_render as render
from backend.graph.edges import both_directions, far_entity
from backend.graph.templates import ExcludeSpec, IncludeSpec, load_template, parse_age
from backend.knowledge.search import search_entries
from backend.repo.scope import as_uuid, member_project_ids
from backend.text import analyze, bm25_scores
from backend.tokens import TokenCounter

DEFAULT_BUDGET = 4000
FRONTIER_CAP = 500
DEPTH_PEEK_LIMIT = 200
TYPE_WEIGHT = {
    "goal": 1.0,
    "milestone": 0.9,
    "plan": 0.85,
    "task": 0.8,
    "kb_entry": 0.75,
    "document": 0.7,
    "output": 0.6,
}
KNOWLEDGE_CANDIDATES = 10
"""How many matching knowledge-base entries compete for the budget beside graph items."""
CHAIN_RELATIONS = (
    "depends_on",
    "belongs_to_plan",
    "supports_goal",
    "requires",
    "achieved_by",
    "targets_milestone",
)
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_RELATED_TOKENS = 24
"""No related item renders shorter than this, so below it the budget is full."""
MAX_CONSECUTIVE_MISSES = 25
"""After this many best-first items in a row did not fit, the budget counts as full."""


@dataclass(frozen=True)
class StrategyParams:
    """How a strategy traverses and weighs."""

    depth: int
    fanout: int | None
    weights: dict[str, float]
    expand_on_match: bool = False


_SPEC = {"distance": 0.30, "recency": 0.20, "references": 0.20, "type": 0.15, "content": 0.15}
STRATEGIES: dict[str, StrategyParams] = {
    "relevance": StrategyParams(2, None, _SPEC),
    "breadth": StrategyParams(1, None, _SPEC),
    "depth": StrategyParams(4, 3, _SPEC),
    "semantic": StrategyParams(
        3, None, {"distance": 0.20, "recency": 0.10, "references": 0.10, "type": 0.10, "content": 0.50}, True
    ),
}


@dataclass
class Candidate:
    """A node reached by traversal, with how it was reached and how it scored."""

    node: render.Node
    distance: int
    relation: str
    direction: str
    via: render.Node
    """The node it was reached from."""
    score: float = 0.0
    factors: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildRequest:
    """Resolved arguments (template defaults applied)."""

    seeds: list[str]
    budget: int
    strategy: str
    include: IncludeSpec
    exclude: ExcludeSpec
    format: str
    template: str | None
    query: str | None
    existing_ids: frozenset[str]


def resolve_request(
    seeds: Sequence[str],
    *,
    budget: int | None = None,
    strategy: str | None = None,
    include: IncludeSpec | dict[str, Any] | None = None,
    exclude: ExcludeSpec | dict[str, Any] | None = None,
    format: str | None = None,
    template: str | None = None,
    query: str | None = None,
    existing_context: dict[str, Any] | None = None,
    additional_budget: int | None = None,
    templates_dir: Path | None = None,
) -> BuildRequest:
    """Merge explicit arguments over a template (shipped or from `templates_dir`) over the defaults,
    and validate them."""
    tpl = load_template(template, templates_dir) if template else None
    strategy = strategy or (tpl.strategy if tpl else None) or "relevance"
    if strategy not in STRATEGIES:
        raise ValidationError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    fmt = format or (tpl.format if tpl else None) or "structured"
    if fmt not in ("structured", "narrative", "outline"):
        raise ValidationError(f"unknown format {fmt!r}; expected structured, narrative or outline")
    try:
        inc = (
            IncludeSpec.model_validate(include)
            if isinstance(include, dict)
            else include or (tpl.include if tpl else IncludeSpec())
        )
        exc = (
            ExcludeSpec.model_validate(exclude)
            if isinstance(exclude, dict)
            else exclude or (tpl.exclude if tpl else ExcludeSpec())
        )
    except PydanticValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValidationError(f"invalid include/exclude: {problems}") from None
    existing = _existing_ids(existing_context)
    total = additional_budget if existing_context is not None and additional_budget else None
    total = total or budget or (tpl.budget if tpl else None) or DEFAULT_BUDGET
    if total < 50:
        raise ValidationError("budget must be at least 50 tokens")
    if not seeds:
        raise ValidationError("build_context needs at least one seed entity id")
    return BuildRequest(list(dict.fromkeys(seeds)), total, strategy, inc, exc, fmt, template, query, existing)


def _existing_ids(existing: dict[str, Any] | None) -> frozenset[str]:
    """Ids already sent: the previous response's primary/related nodes and `metadata.seen_ids`."""
    if not existing:
        return frozenset()
    try:
        ids = {str(p["node"]["id"]) for p in existing.get("primary", [])} | {
            str(r["node"]["id"]) for r in existing.get("related", [])
        }
        return frozenset(ids) | frozenset(str(i) for i in existing.get("metadata", {}).get("seen_ids", []))
    except (KeyError, TypeError, AttributeError):
        raise ValidationError(
            "existing_context must be an earlier build_context response "
            "(primary/related items with node.id, metadata.seen_ids)"
        ) from None


_COLUMNS = ("id", "kind", "name", "state", "type_key", "description", "due_at", "updated_at", "goal_type")


def _node(row: Any) -> render.Node:
    return render.Node(
        str(row.id),
        row.kind,
        row.name,
        row.state,
        row.type_key,
        row.description,
        row.due_at,
        row.updated_at,
        row.goal_type,
    )


async def _neighbours(
    session: AsyncSession,
    frontier: Sequence[uuid.UUID],
    relations: list[str] | None,
    limit: int | None = None,
) -> list[Any]:
    """Edges touching the frontier, both directions, with the far entity: one query."""
    other = far_entity()
    where = [other.is_scratch.is_(False)] + ([Edge.rel.in_(relations)] if relations else [])
    out, inc = both_directions(frontier, other, [getattr(other, c) for c in _COLUMNS], where)
    query = union_all(out, inc)
    if limit is not None:
        query = query.limit(limit)
    return list((await session.execute(query)).all())


async def build_context(
    session: AsyncSession,
    user_id: uuid.UUID,
    request: BuildRequest,
    counter: TokenCounter,
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Build the context bundle (see the README for the response shape)."""
    params = STRATEGIES[request.strategy]
    depth = request.include.depth if request.include.depth is not None else params.depth
    seed_ids = [as_uuid(s, "entity") for s in request.seeds]
    rows = (
        await session.execute(
            select(*(getattr(Entity, c) for c in _COLUMNS), Entity.project_id).where(
                Entity.id.in_(seed_ids), Entity.project_id.in_(member_project_ids(user_id))
            )
        )
    ).all()
    found = {str(r.id): _node(r) for r in rows}
    for sid in seed_ids:
        if str(sid) not in found:
            raise NotFoundError("entity", sid)
    seeds = [found[str(s)] for s in seed_ids]
    query_text = request.query or ""
    candidates, depth_cut, trips = await _traverse(session, seeds, depth, params, request, query_text)
    refs = await _reference_counts(session, [uuid.UUID(c.node.id) for c in candidates.values()])
    _score(list(candidates.values()), refs, params, query_text, now or utcnow())
    if request.include.knowledge:
        topic = query_text or " ".join(s.name for s in seeds)
        knowledge, queries = await _knowledge_candidates(
            session, user_id, rows[0].project_id, topic, seeds[0], params
        )
        candidates.update({c.node.id: c for c in knowledge})
        trips += queries
    return _select(request, seeds, candidates, depth_cut, counter, trips + 2)


async def _knowledge_candidates(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID,
    topic: str,
    seed: render.Node,
    params: StrategyParams,
) -> tuple[list[Candidate], int]:
    """The project's best-matching KB entries as candidates (distance 1, scored on the same scale)."""
    found = await search_entries(session, user_id, project_id, topic, limit=KNOWLEDGE_CANDIDATES)
    finite = [h.rank for h in found.hits if math.isfinite(h.rank)]
    top = max(finite, default=1.0) or 1.0
    now = utcnow()
    out = []
    for hit in found.hits:
        node = render.Node(
            str(hit.entry_id),
            "kb_entry",
            f"{hit.code}: {hit.name}",
            hit.collection_slug,
            None,
            hit.description,
            None,
            now,
        )
        content = 1.0 if not math.isfinite(hit.rank) else max(0.0, hit.rank / top)
        factors = {
            "distance": 1.0,
            "recency": 1.0,
            "references": 0.0,
            "type": TYPE_WEIGHT["kb_entry"],
            "content": round(content, 4),
        }
        score = round(sum(params.weights[k] * v for k, v in factors.items()), 4)
        out.append(Candidate(node, 1, "knowledge", "outgoing", seed, score, factors))
    return out, found.queries


async def _traverse(
    session: AsyncSession,
    seeds: list[render.Node],
    depth: int,
    params: StrategyParams,
    request: BuildRequest,
    query: str,
) -> tuple[dict[str, Candidate], list[str], int]:
    visited = {s.id for s in seeds}
    candidates: dict[str, Candidate] = {}
    names = {s.id: s for s in seeds}
    frontier = [uuid.UUID(s.id) for s in seeds]
    query_terms = set(analyze(query))
    trips = 0
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = await _neighbours(session, frontier, request.include.relations)
        trips += 1
        nxt: list[uuid.UUID] = []
        for row in _fanout(rows, params.fanout):
            rid = str(row.id)
            if rid in visited:
                continue
            visited.add(rid)
            node = _node(row)
            names[rid] = node
            candidates[rid] = Candidate(node, level, row.relation, row.direction, names[str(row.from_id)])
            if (
                not params.expand_on_match
                or not query_terms
                or query_terms & set(analyze(f"{node.name} {node.description or ''}"))
            ):
                nxt.append(row.id)
        frontier = nxt[:FRONTIER_CAP]
    depth_cut: list[str] = []
    if frontier:
        trips += 1
        for row in await _neighbours(session, frontier, request.include.relations, DEPTH_PEEK_LIMIT):
            if str(row.id) not in visited and str(row.id) not in depth_cut:
                depth_cut.append(str(row.id))
    return candidates, depth_cut, trips


def _fanout(rows: list[Any], fanout: int | None) -> list[Any]:
    """At most `fanout` links per node: chain relations first, then active items, then newest."""
    if fanout is None:
        return rows
    by_from: dict[Any, list[Any]] = {}
    for row in rows:
        by_from.setdefault(row.from_id, []).append(row)
    kept = []
    for group in by_from.values():
        group.sort(
            key=lambda r: (
                r.relation not in CHAIN_RELATIONS,
                r.state not in ("active", "in_progress"),
                -r.updated_at.timestamp(),
            )
        )
        kept.extend(group[:fanout])
    return kept


async def _reference_counts(session: AsyncSession, ids: list[uuid.UUID]) -> dict[str, int]:
    if not ids:
        return {}
    rows = await session.execute(
        select(Edge.dst_id, func.count()).where(Edge.dst_id.in_(ids)).group_by(Edge.dst_id)
    )
    return {str(i): int(n) for i, n in rows.all()}


def _score(
    cands: list[Candidate], refs: dict[str, int], params: StrategyParams, query: str, now: datetime
) -> None:
    terms = analyze(query)
    documents = [analyze(f"{c.node.name} {c.node.description or ''}") for c in cands] if terms else []
    content = bm25_scores(terms, documents) if terms else [0.0] * len(cands)
    top_content = max(content, default=0.0) or 1.0
    top_refs = math.log1p(max(refs.values(), default=0)) or 1.0
    for c, lexical in zip(cands, content, strict=True):
        age_days = max(0.0, (now - c.node.updated_at).total_seconds() / 86_400)
        c.factors = {
            "distance": round(1.0 / c.distance, 4),
            "recency": round(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS), 4),
            "references": round(math.log1p(refs.get(c.node.id, 0)) / top_refs, 4),
            "type": TYPE_WEIGHT.get(c.node.kind, 0.5),
            "content": round(lexical / top_content, 4) if terms else 0.0,
        }
        c.score = round(sum(params.weights[k] * v for k, v in c.factors.items()), 4)


def _filtered(c: Candidate, request: BuildRequest, now: datetime) -> bool:
    ex, inc = request.exclude, request.include
    if c.node.kind in ex.kinds or c.node.state in ex.states:
        return True
    if inc.kinds is not None and c.node.kind not in inc.kinds:
        return True
    return bool(ex.older_than and now - c.node.updated_at > parse_age(ex.older_than))


def _select(
    request: BuildRequest,
    seeds: list[render.Node],
    candidates: dict[str, Candidate],
    depth_cut: list[str],
    counter: TokenCounter,
    trips: int,
) -> dict[str, Any]:
    now = utcnow()
    fmt, with_desc = request.format, request.include.descriptions
    incremental = bool(request.existing_ids)
    new_seeds = [s for s in seeds if s.id not in request.existing_ids]
    sep = "\n\n" if fmt != "outline" else "\n"
    blocks = [render.header(new_seeds or seeds, fmt, incremental)]
    blocks += [render.primary(s, fmt, counter, with_desc) for s in new_seeds]
    used = counter.count(sep.join(blocks))
    truncated = used > request.budget
    excluded: list[dict[str, Any]] = []
    chosen: list[tuple[Candidate, str]] = []
    misses = 0
    for c in sorted(candidates.values(), key=lambda c: (-c.score, c.distance, c.node.id)):
        if c.node.id in request.existing_ids:
            continue
        if _filtered(c, request, now):
            excluded.append(_excluded(c, "filter"))
            continue
        if request.budget - used < MIN_RELATED_TOKENS or misses >= MAX_CONSECUTIVE_MISSES:
            excluded.append(_excluded(c, "budget"))  # full: the rest is not even rendered
            truncated = True
            continue
        block = render.related(
            c.node, c.relation, c.direction, c.via, c.distance, c.score, fmt, counter, with_desc
        )
        cost = counter.count(sep + block)
        if used + cost > request.budget:
            excluded.append(_excluded(c, "budget"))
            truncated = True
            misses += 1
            continue
        chosen.append((c, block))
        used += cost
        misses = 0
    text = _compose(blocks, chosen, seeds, fmt, sep, counter, with_desc)
    while chosen and counter.count(text) > request.budget:  # joints can merge tokens: stay exact
        c, _ = chosen.pop()
        excluded.append(_excluded(c, "budget"))
        text = _compose(blocks, chosen, seeds, fmt, sep, counter, with_desc)
    excluded += [{"id": i, "name": None, "reason": "depth", "score": None} for i in depth_cut]
    return {
        "query": {
            "seeds": request.seeds,
            "budget": request.budget,
            "strategy": request.strategy,
            "format": fmt,
            "template": request.template,
            "query": request.query,
        },
        "primary": [_primary_dict(s) for s in new_seeds],
        "related": [_related_dict(c) for c, _ in chosen],
        "metadata": {
            "tokens_used": counter.count(text),
            "tokens_budget": request.budget,
            "items_included": len(new_seeds) + len(chosen),
            "items_excluded": len(excluded),
            "truncated": truncated,
            "incremental": incremental,
            "candidates": len(candidates),
            "round_trips": trips,
            "encoding": counter.encoding_name,
            "seen_ids": sorted(request.existing_ids | {s.id for s in seeds} | {c.node.id for c, _ in chosen}),
        },
        "excluded": excluded,
        "text": text,
    }


def _compose(
    blocks: list[str],
    chosen: list[tuple[Candidate, str]],
    seeds: list[render.Node],
    fmt: str,
    sep: str,
    counter: TokenCounter,
    with_desc: bool,
) -> str:
    """Join the blocks; an outline is re-ordered as a tree (each item under the one it came from)."""
    if fmt != "outline":
        return sep.join(blocks + [b for _, b in chosen])
    children: dict[str, list[Candidate]] = {}
    for c, _ in chosen:
        children.setdefault(c.via.id, []).append(c)
    placed: set[str] = set()
    lines: list[str] = []

    def walk(parent: str, level: int) -> None:
        for c in children.get(parent, []):
            if c.node.id in placed:
                continue
            placed.add(c.node.id)
            lines.append(
                render.related(
                    c.node, c.relation, c.direction, c.via, level, c.score, fmt, counter, with_desc
                )
            )
            walk(c.node.id, level + 1)

    for seed in seeds:
        walk(seed.id, 1)
    for c, _ in chosen:  # items whose parent did not fit: top level, with their `via`
        if c.node.id not in placed:
            placed.add(c.node.id)
            lines.append(
                render.related(
                    c.node, c.relation, c.direction, c.via, c.distance, c.score, fmt, counter, with_desc, 1
                )
            )
    return sep.join(blocks + lines)


def _excluded(c: Candidate, reason: str) -> dict[str, Any]:
    return {"id": c.node.id, "name": c.node.name, "reason": reason, "score": c.score}


def _node_dict(n: render.Node) -> dict[str, Any]:
    return {"id": n.id, "kind": n.kind, "name": n.name, "state": n.state, "type_key": n.type_key}


def _primary_dict(n: render.Node) -> dict[str, Any]:
    fields = {
        "state": n.state,
        "type": n.type_key,
        "goal_type": n.goal_type,
        "due_at": n.due_at.isoformat() if n.due_at else None,
    }
    return {
        "node": _node_dict(n),
        "fields": {k: v for k, v in fields.items() if v},
        "content": n.description or "",
    }


def _related_dict(c: Candidate) -> dict[str, Any]:
    return {
        "node": _node_dict(c.node),
        "relationship": c.relation,
        "direction": c.direction,
        "via": c.via.id,
        "distance": c.distance,
        "score": c.score,
        "factors": c.factors,
    }
