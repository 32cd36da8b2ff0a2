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
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.base import utcnow
from backend.db.models import Entity
from backend.errors import NotFoundError, ValidationError
from backend.graph import context_render as render
from backend.graph.templates import ExcludeSpec, IncludeSpec, load_template, parse_age
from backend.graph.traversal import FACTORS, TYPE_WEIGHT, Candidate, score, traverse
from backend.knowledge.search import search_entries
from backend.repo.scope import as_uuid, member_project_ids
from backend.text import analyze
from backend.tokens import TokenCounter

DEFAULT_BUDGET = 4000
KNOWLEDGE_CANDIDATES = 10
"""How many matching knowledge-base entries compete for the budget beside graph items."""
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


_SEED_COLUMNS = ("kind", "name", "state", "type_key", "description", "due_at", "goal_type", "project_id")


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
            select(Entity.id, *(getattr(Entity, c) for c in _SEED_COLUMNS)).where(
                Entity.id.in_(seed_ids), Entity.project_id.in_(member_project_ids(user_id))
            )
        )
    ).all()
    found = {
        str(r.id): render.Node(
            str(r.id), r.kind, r.name, r.state, r.type_key, r.description, r.due_at, 0.0, r.goal_type
        )
        for r in rows
    }
    for sid in seed_ids:
        if str(sid) not in found:
            raise NotFoundError("entity", sid)
    seeds = [found[str(s)] for s in seed_ids]
    query_text = request.query or ""
    terms = analyze(query_text)
    candidates, depth_cut, trips = await traverse(
        session,
        seeds,
        depth,
        params.fanout,
        params.expand_on_match,
        request.include.relations,
        terms,
        now or utcnow(),
    )
    score(list(candidates.values()), params.weights, terms)
    if request.include.knowledge:
        topic = query_text or " ".join(s.name for s in seeds)
        knowledge, queries = await _knowledge_candidates(
            session, user_id, rows[0].project_id, topic, seeds[0], params
        )
        candidates.update({c.node.id: c for c in knowledge})
        trips += queries
    return _select(request, seeds, candidates, depth_cut, counter, trips + 1)


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
            0.0,
        )
        content = 1.0 if not math.isfinite(hit.rank) else max(0.0, hit.rank / top)
        raw = (1.0, 1.0, 0.0, TYPE_WEIGHT["kb_entry"], content)
        score = round(sum(params.weights[k] * v for k, v in zip(FACTORS, raw, strict=True)), 4)
        out.append(Candidate(node, 1, "knowledge", "outgoing", seed, score, raw))
    return out, found.queries


def _filtered(c: Candidate, request: BuildRequest, max_age_days: float | None) -> bool:
    ex, inc = request.exclude, request.include
    if c.node.kind in ex.kinds or c.node.state in ex.states:
        return True
    if inc.kinds is not None and c.node.kind not in inc.kinds:
        return True
    return max_age_days is not None and c.node.kind != "kb_entry" and c.node.age_days > max_age_days


def _select(
    request: BuildRequest,
    seeds: list[render.Node],
    candidates: dict[str, Candidate],
    depth_cut: list[str],
    counter: TokenCounter,
    trips: int,
) -> dict[str, Any]:
    older = request.exclude.older_than
    max_age_days = parse_age(older).total_seconds() / 86_400 if older else None
    fmt, with_desc = request.format, request.include.descriptions
    incremental = bool(request.existing_ids)
    new_seeds = [s for s in seeds if s.id not in request.existing_ids]
    sep = "\n\n" if fmt != "outline" else "\n"
    blocks, truncated = _seed_blocks(
        render.header(new_seeds or seeds, fmt, incremental),
        [render.primary(s, fmt, counter, with_desc) for s in new_seeds],
        sep,
        request.budget,
        counter,
    )
    used = counter.count(sep.join(blocks))
    excluded: list[dict[str, Any]] = []
    chosen: list[tuple[Candidate, str]] = []
    misses = 0
    for c in sorted(candidates.values(), key=lambda c: (-c.score, c.distance, c.node.id)):
        if c.node.id in request.existing_ids:
            continue
        if _filtered(c, request, max_age_days):
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
    if counter.count(text) > request.budget:  # the seeds alone: already cut to fit, stay exact
        text = counter.truncate(text, request.budget)
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


def _seed_blocks(
    header: str, primaries: list[str], sep: str, budget: int, counter: TokenCounter
) -> tuple[list[str], bool]:
    """The header and the seeds' blocks, each seed's text cut (from its end, at word boundaries)
    to an equal share when they do not all fit; True when something was cut."""
    blocks = [header, *primaries]
    if counter.count(sep.join(blocks)) <= budget:
        return blocks, False
    header = counter.truncate(header, max(1, budget // 4))
    joints = counter.count(sep) * len(primaries)
    share = (budget - counter.count(header) - joints) // max(1, len(primaries))
    while share > 0:
        blocks = [header, *(counter.truncate(p, share) for p in primaries)]
        if counter.count(sep.join(blocks)) <= budget:
            return [b for b in blocks if b], True
        share -= 1
    return [header], True


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
