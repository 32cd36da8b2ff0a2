"""build_context's response: seed 003's bundle (query, context {primary, related, references,
timeline}, metadata, excluded) plus the rendered text, whose footer the budget counts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from orrery.graph import context_render as render
from orrery.graph.templates import REFERENCE_RELATIONS

if TYPE_CHECKING:
    from orrery.graph.context_request import BuildRequest
    from orrery.graph.traversal import Candidate

FOOTER_SEP = "\n\n"


def footer(items: int, used: int, budget: int, excluded: list[dict[str, Any]]) -> str:
    """The receipt line under the context: what is in, the tokens, and what was left out and why."""
    reasons: dict[str, int] = {}
    for item in excluded:
        reasons[item["reason"]] = reasons.get(item["reason"], 0) + 1
    left_out = ", ".join(f"{n} by {r}" for r, n in sorted(reasons.items())) or "nothing"
    return f"_{items} items, {used}/{budget} tokens; left out: {left_out}._"


def worst_footer(items: int, depth: int, filtered: int, budget: int) -> str:
    """The longest footer this build can print: the depth and filter counts are known before the
    budget is filled; at most every other candidate is cut for budget. Reserved up front."""
    fake = [{"reason": "depth"}] * depth + [{"reason": "filter"}] * filtered + [{"reason": "budget"}] * items
    return footer(items, budget, budget, fake)


def excluded_item(c: Candidate, reason: str) -> dict[str, Any]:
    return {"id": c.node.id, "name": c.node.name, "reason": reason, "score": c.score}


def bundle(
    request: BuildRequest,
    seeds: list[render.Node],
    new_seeds: list[render.Node],
    chosen: list[Candidate],
    excluded: list[dict[str, Any]],
    text: str,
    meta: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The response. `primary` and `related` also stay at the top level (the shape before seed 003's
    `context` wrapper), so earlier clients and `existing_context` keep working."""
    primary = [_primary_dict(s) for s in new_seeds]
    related = [_related_dict(c) for c in chosen]
    return {
        "query": {
            "seeds": request.seeds,
            "budget": request.budget,
            "strategy": request.strategy,
            "format": request.format,
            "template": request.template,
            "query": request.query,
        },
        "context": {
            "primary": primary,
            "related": related,
            "references": [_reference(c) for c in chosen if c.relation in REFERENCE_RELATIONS],
            "timeline": timeline(new_seeds, chosen, now),
        },
        "primary": primary,
        "related": related,
        "metadata": {
            **meta,
            "seen_ids": sorted(request.existing_ids | {s.id for s in seeds} | {c.node.id for c in chosen}),
        },
        "excluded": excluded,
        "text": text,
    }


def timeline(seeds: list[render.Node], chosen: list[Candidate], now: datetime) -> list[dict[str, Any]]:
    """Recent activity among the included items (knowledge entries have none): newest first."""
    nodes = [*seeds, *(c.node for c in chosen if c.node.kind != "kb_entry")]
    events = [
        {
            "id": n.id,
            "name": n.name,
            "kind": n.kind,
            **({"state": n.state} if n.show_fields else {}),
            "updated_at": (now - timedelta(days=n.age_days)).isoformat(timespec="seconds"),
            **({"due_at": n.due_at.isoformat() if n.due_at else None} if n.show_fields else {}),
        }
        for n in nodes
    ]
    return sorted(events, key=lambda e: str(e["updated_at"]), reverse=True)


def _reference(c: Candidate) -> dict[str, Any]:
    return {
        "id": c.node.id,
        "name": c.node.name,
        "kind": c.node.kind,
        "direction": c.direction,
        "via": c.via.id,
    }


def _node_dict(n: render.Node) -> dict[str, Any]:
    if not n.show_fields:  # include.fields: false
        return {"id": n.id, "kind": n.kind, "name": n.name}
    return {"id": n.id, "kind": n.kind, "name": n.name, "state": n.state, "type_key": n.type_key}


def _primary_dict(n: render.Node) -> dict[str, Any]:
    fields = {
        "state": n.state,
        "type": n.type_key,
        "goal_type": n.goal_type,
        "due_at": n.due_at.isoformat() if n.due_at else None,
    }
    fields = fields if n.show_fields else {}
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
        "relevanceScore": c.score,
        "factors": c.factors,
    }
