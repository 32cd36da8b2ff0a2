"""Graph tools: the focus entity's links in full, and token-budgeted context from seed entities."""

from __future__ import annotations

from typing import Literal

from pydantic_ai import ModelRetry, RunContext

from backend.deps import TurnDeps
from backend.errors import UserError
from backend.graph.linked import load_linked_entities_context
from backend.graph.linked_format import format_full
from backend.vocabulary import EntityKind
from tools._errors import readable_errors


async def get_linked_entities(
    ctx: RunContext[TurnDeps],
    entity_id: str,
    entity_kind: EntityKind,
    filter_kind: EntityKind | Literal["all"] = "all",
) -> str:
    """Get every entity linked to one entity, with full descriptions. Read-only.

    Use it to learn which plans a task belongs to, which tasks support a goal, what documents an
    entity references, or which tasks depend on which. Each result shows state, type, the
    relationship and its direction: outgoing means the entity points to the linked one, incoming
    means the linked one points to it.

    Args:
        entity_id: UUID of the entity, as shown in brackets in the Linked Entities section.
        entity_kind: The kind of that entity: task, plan, goal, milestone, document or output.
        filter_kind: Only linked entities of this kind, or "all" for every kind.
    """
    try:
        async with ctx.deps.db.sessions() as session:
            linked = await load_linked_entities_context(
                session,
                ctx.deps.user_id,
                entity_id,
                entity_kind,
                max_per_type=None,
                include_descriptions=True,
                filter_kind=None if filter_kind == "all" else filter_kind,
            )
    except UserError as exc:
        raise ModelRetry(
            f"{exc}. Use an id and kind exactly as shown in the Linked Entities section."
        ) from None
    return format_full(linked)


async def build_context(
    ctx: RunContext[TurnDeps],
    seeds: list[str],
    query: str | None = None,
    budget: int = 2000,
    strategy: Literal["relevance", "breadth", "depth", "semantic"] | None = None,
    template: str | None = None,
    format: Literal["structured", "narrative", "outline"] | None = None,
) -> str:
    """Gather the most relevant graph context around seed entities within a token budget. Read-only.

    Traverses relationships from the seeds, scores every item (distance, recency, how often it is
    referenced, type, similarity to the query) and returns the best items that fit the budget, with
    a note of what was left out.

    Args:
        seeds: Entity UUIDs to start from (ids in brackets in the context), one or more.
        query: What you want to know; items similar to it rank higher.
        budget: Maximum tokens of context to return (50 to 8000).
        strategy: relevance (default), breadth (wide and shallow), depth (follow dependency
            chains), or semantic (only paths that match the query).
        template: A named context template such as project-context, task-deep-dive or goal-overview.
        format: structured (markdown, default), narrative (prose) or outline (indented bullets).
    """
    from backend.graph.context_builder import build_context as build
    from backend.graph.context_builder import resolve_request
    from backend.tokens import counter_for

    with readable_errors(". Seeds must be entity ids you have seen in this conversation."):
        request = resolve_request(
            seeds,
            budget=min(max(budget, 50), 8000),
            strategy=strategy,
            template=template,
            format=format,
            query=query,
        )
        async with ctx.deps.db.sessions() as session:
            result = await build(session, ctx.deps.user_id, request, counter_for(ctx.deps.settings.model))
    meta = result["metadata"]
    reasons: dict[str, int] = {}
    for item in result["excluded"]:
        reasons[item["reason"]] = reasons.get(item["reason"], 0) + 1
    left_out = ", ".join(f"{n} by {r}" for r, n in sorted(reasons.items())) or "nothing"
    used = f"{meta['tokens_used']}/{meta['tokens_budget']} tokens"
    footer = f"\n\n_{meta['items_included']} items, {used}; left out: {left_out}._"
    return str(result["text"]) + footer
