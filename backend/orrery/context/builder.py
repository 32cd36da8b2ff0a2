"""build_context: the most relevant graph context around seed entities, inside a token budget.

Traversal is breadth-first, one query per level (outgoing and incoming edges joined to the entity
on the far end), plus one query for the seeds, one for reference counts and one that peeks past the
depth limit — a constant number of round trips whatever the number of edges.

Each candidate is scored: distance 30% + recency 20% + references 20% + type 15% + content
similarity to the query 15% (the `semantic` strategy weighs content 50%). Items go in best-first
until the budget, counted exactly on the rendered text (its footer included), is reached.

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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.models import Entity
from orrery.errors import NotFoundError
from orrery.graph import context_render as render
from orrery.graph.context_request import DEFAULT_BUDGET, BuildRequest, resolve_request
from orrery.graph.context_response import FOOTER_SEP, bundle, excluded_item, footer, worst_footer
from orrery.graph.templates import parse_age
from orrery.graph.traversal import FACTORS, TYPE_WEIGHT, Candidate, score, traverse
from orrery.knowledge.search import search_entries
from orrery.repo.scope import as_uuid, member_project_ids
from orrery.text import analyze
from orrery.tokens import TokenCounter

__all__ = ["DEFAULT_BUDGET", "STRATEGIES", "BuildRequest", "build_context", "resolve_request"]
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


_SEED_COLUMNS = (
    "kind",
    "name",
    "state",
    "type_key",
    "description",
    "due_at",
    "goal_type",
    "project_id",
    "updated_at",
)


async def build_context(
    session: AsyncSession,
    user_id: uuid.UUID,
    request: BuildRequest,
    counter: TokenCounter,
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Build the context bundle (docs/concepts/focus.md shows the response shape)."""
    user_id = as_uuid(user_id, "user")
    now = now or utcnow()
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
            str(r.id),
            r.kind,
            r.name,
            r.state,
            r.type_key,
            r.description,
            r.due_at,
            _age(r.updated_at, now),
            r.goal_type,
        )
        for r in rows
    }
    if missing := [sid for sid in seed_ids if str(sid) not in found]:
        raise NotFoundError("entity", missing[0])
    seeds = [found[str(s)] for s in seed_ids]
    terms = analyze(query_text := request.query or "")
    candidates, depth_cut, trips = await traverse(
        session,
        seeds,
        depth,
        params.fanout,
        params.expand_on_match,
        request.include.relations,
        terms,
        now,
        request.include.skip_incoming,
    )
    score(list(candidates.values()), params.weights, terms)
    if request.include.knowledge:
        topic = query_text or " ".join(s.name for s in seeds)
        knowledge, queries = await _knowledge_candidates(
            session, user_id, rows[0].project_id, topic, seeds[0], params
        )
        candidates.update({c.node.id: c for c in knowledge})
        trips += queries
    seeds = _hide_fields(seeds, candidates) if request.include.fields is False else seeds
    return _select(request, seeds, candidates, depth_cut, counter, trips + 1, now)


def _hide_fields(seeds: list[render.Node], candidates: dict[str, Candidate]) -> list[render.Node]:
    """Seed 003's `include.fields: false`: nodes that render without state, type and due date (the
    filters still read them)."""
    for c in candidates.values():
        c.node = c.node._replace(show_fields=False)
    return [s._replace(show_fields=False) for s in seeds]


def _age(updated_at: datetime | None, now: datetime) -> float:
    """Days since a seed was last updated (naive datetimes from SQLite read as UTC)."""
    if updated_at is None:
        return 0.0
    if updated_at.tzinfo is None and now.tzinfo is not None:
        updated_at = updated_at.replace(tzinfo=now.tzinfo)
    return max(0.0, (now - updated_at).total_seconds() / 86_400)


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
    if c.node.kind in ex.kinds or ex.excludes_state(c.node.state):
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
    now: datetime,
) -> dict[str, Any]:
    """Fill the budget best-first; the footer's worst case is reserved first, so the text with its
    footer fits (at tiny budgets, where even the footer does not, the text is the cut header alone)."""
    older = request.exclude.older_than
    max_age_days = parse_age(older).total_seconds() / 86_400 if older else None
    fmt, with_desc = request.format, request.include.descriptions
    incremental = bool(request.existing_ids)
    new_seeds = [s for s in seeds if s.id not in request.existing_ids]
    sep = "\n\n" if fmt != "outline" else "\n"
    fresh = [c for c in candidates.values() if c.node.id not in request.existing_ids]
    filtered = sum(_filtered(c, request, max_age_days) for c in fresh)
    worst = worst_footer(len(new_seeds) + len(fresh), len(depth_cut), filtered, request.budget)
    reserve = counter.count(FOOTER_SEP + worst)
    room = request.budget - reserve if request.budget - reserve >= MIN_RELATED_TOKENS else request.budget
    blocks, truncated = _seed_blocks(
        render.header(new_seeds or seeds, fmt, incremental),
        [render.primary(s, fmt, counter, with_desc) for s in new_seeds],
        sep,
        room,
        counter,
    )
    chosen, excluded = _fill(fresh, request, room, counter.count(sep.join(blocks)), counter, max_age_days)
    excluded += [{"id": i, "name": None, "reason": "depth", "score": None} for i in depth_cut]
    text = _finish(blocks, chosen, excluded, seeds, new_seeds, request, counter)
    meta = {
        "tokens_used": counter.count(text),
        "tokens_budget": request.budget,
        "items_included": len(new_seeds) + len(chosen),
        "items_excluded": len(excluded),
        "truncated": truncated or any(e["reason"] == "budget" for e in excluded),
        "incremental": incremental,
        "candidates": len(candidates),
        "round_trips": trips,
        "encoding": counter.encoding_name,
        "exact_tokens": counter.exact,  # False: the model's tokenizer is unknown, cl100k_base estimates
        **({"notes": request.include.notes} if request.include.notes else {}),
    }
    return bundle(request, seeds, new_seeds, [c for c, _ in chosen], excluded, text, meta, now)


def _fill(
    fresh: list[Candidate],
    request: BuildRequest,
    room: int,
    used: int,
    counter: TokenCounter,
    max_age_days: float | None,
) -> tuple[list[tuple[Candidate, str]], list[dict[str, Any]]]:
    """Best-first: each item that fits `room` goes in; filtered and unfitting ones are listed."""
    fmt, with_desc = request.format, request.include.descriptions
    sep = "\n\n" if fmt != "outline" else "\n"
    excluded: list[dict[str, Any]] = []
    chosen: list[tuple[Candidate, str]] = []
    misses = 0
    for c in sorted(fresh, key=lambda c: (-c.score, c.distance, c.node.id)):
        if _filtered(c, request, max_age_days):
            excluded.append(excluded_item(c, "filter"))
            continue
        if room - used < MIN_RELATED_TOKENS or misses >= MAX_CONSECUTIVE_MISSES:
            excluded.append(excluded_item(c, "budget"))  # full: the rest is not even rendered
            continue
        block = render.related(
            c.node, c.relation, c.direction, c.via, c.distance, c.score, fmt, counter, with_desc
        )
        cost = counter.count(sep + block)
        if used + cost > room:
            excluded.append(excluded_item(c, "budget"))
            misses += 1
            continue
        chosen.append((c, block))
        used += cost
        misses = 0
    return chosen, excluded


def _finish(
    blocks: list[str],
    chosen: list[tuple[Candidate, str]],
    excluded: list[dict[str, Any]],
    seeds: list[render.Node],
    new_seeds: list[render.Node],
    request: BuildRequest,
    counter: TokenCounter,
) -> str:
    """The text with its footer, exactly within the budget: joints can merge tokens, so it is counted
    whole, and the last items go (listed as cut for budget) until it fits."""
    fmt, sep, budget = request.format, "\n\n" if request.format != "outline" else "\n", request.budget
    while True:
        body = _compose(blocks, chosen, seeds, fmt, sep, counter, request.include.descriptions)
        items = len(new_seeds) + len(chosen)
        text = body
        for _ in range(3):  # the footer states the total it is part of: settle its digits
            text = body + FOOTER_SEP + footer(items, counter.count(text), budget, excluded)
        if counter.count(text) <= budget:
            return text
        if not chosen:
            return counter.truncate(body, budget)  # even the footer does not fit: the cut seeds alone
        c, _ = chosen.pop()
        excluded.append(excluded_item(c, "budget"))


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
