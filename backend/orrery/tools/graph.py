"""Graph tools: the focus entity's links in full, and token-budgeted context from seed entities."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_ai import ModelRetry, RunContext

from orrery.deps import TurnDeps
from orrery.errors import UserError
from orrery.graph.find import find_entities as find
from orrery.graph.find_format import format_found
from orrery.graph.linked import load_linked_entities_context
from orrery.graph.linked_format import format_full
from orrery.graph.templates import ExcludeSpec, IncludeSpec
from orrery.tools._errors import readable_errors
from orrery.validation import Text
from orrery.vocabulary import EntityKind


async def get_linked_entities(
    ctx: RunContext[TurnDeps],
    entity_id: Text,
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
        async with ctx.deps.db.single() as session:  # reads only, no common snapshot needed: no BEGIN
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


async def find_entities(
    ctx: RunContext[TurnDeps],
    query: Annotated[Text, Field(max_length=500)] = "",
    kind: EntityKind | Literal["all"] = "all",
    limit: Annotated[int, Field(ge=1, le=25)] = 5,
) -> str:
    """Find the project's tasks, plans, goals, milestones, documents or outputs by name. Read-only.

    Use it when the person names an entity ("the legal review", "the calculator widget") that is
    not the focus, to get its id for `get_linked_entities` and its state, due date, plans and open
    dependencies. With no query: the project's open tasks, ready ones (waiting on nothing
    unfinished) first, for "what should I work on next?".

    Args:
        query: Words of the entity's name; empty for the open tasks.
        kind: Only entities of this kind, or "all".
        limit: At most this many entities (1 to 25).
    """
    if ctx.deps.project_id is None:
        raise ModelRetry("This conversation is not inside a project, so there are no entities to find.")
    async with ctx.deps.db.single() as session:  # two reads, no transaction (no BEGIN on SQLite)
        found = await find(
            session,
            ctx.deps.user_id,
            ctx.deps.project_id,
            query,
            kind=None if kind == "all" else kind,
            limit=limit,
        )
    return format_found(query, found)


DEFAULT_TOOL_BUDGET = 2000
_ID = re.compile(r"\[([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]")


def seen_in(text: str) -> dict[str, Any]:
    """An earlier result's text as `existing_context`: every bracketed id in it counts as seen."""
    return {"metadata": {"seen_ids": list(dict.fromkeys(_ID.findall(text)))}}


async def build_context(
    ctx: RunContext[TurnDeps],
    seeds: list[Text],
    query: Text | None = None,
    budget: int | None = None,
    strategy: Literal["relevance", "breadth", "depth", "semantic"] | None = None,
    template: Text | None = None,
    format: Literal["structured", "narrative", "outline"] | None = None,
    include: IncludeSpec | None = None,
    exclude: ExcludeSpec | None = None,
    existing_context: Text | None = None,
    additional_budget: int | None = None,
) -> str:
    """Gather the most relevant graph context around seed entities within a token budget. Read-only.

    Traverses relationships from the seeds, scores every item (distance, recency, how often it is
    referenced, type, similarity to the query) and returns the best items that fit the budget, with
    a note of what was left out.

    Args:
        seeds: Entity UUIDs to start from (ids in brackets in the context), one or more.
        query: What you want to know; items similar to it rank higher.
        budget: Maximum tokens of context to return, footer included (up to 8000; default 2000, or
            the template's).
        strategy: relevance (default), breadth (wide and shallow), depth (follow dependency
            chains), or semantic (only paths that match the query).
        template: A named context template such as project-context, task-deep-dive or goal-overview.
        format: structured (markdown, default), narrative (prose) or outline (indented bullets).
        include: What to traverse: depth (0-6), relations, kinds, descriptions, knowledge; or seed
            003's names: children, references, fields, related {depth, tags}.
        exclude: What to leave out: kinds, states, older_than (30d, 6m, 1y); or tags, olderThan.
        existing_context: The text of an earlier build_context result; its items are not repeated,
            so you can ask for more around the same seeds.
        additional_budget: With existing_context, the tokens for the new items only (up to 8000).
    """
    from orrery.context.builder import build_context as build
    from orrery.context.builder import resolve_request
    from orrery.tokens import counter_for

    with readable_errors(". Seeds must be entity ids you have seen in this conversation."):
        request = resolve_request(
            seeds,
            budget=min(budget, 8000) if budget is not None else None if template else DEFAULT_TOOL_BUDGET,
            strategy=strategy,
            template=template,
            format=format,
            query=query,
            include=include,
            exclude=exclude,
            existing_context=seen_in(existing_context) if existing_context else None,
            additional_budget=min(additional_budget, 8000) if additional_budget is not None else None,
            templates_dir=ctx.deps.settings.templates_dir,
        )
        async with ctx.deps.db.sessions() as session:
            result = await build(session, ctx.deps.user_id, request, counter_for(ctx.deps.settings.model))
    return str(result["text"])  # its footer (items, tokens, what was left out) is inside the budget
