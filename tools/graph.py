"""Graph tools: the focus entity's links in full, and token-budgeted context from seed entities."""

from __future__ import annotations

from typing import Literal

from pydantic_ai import ModelRetry, RunContext

from backend.deps import TurnDeps
from backend.errors import UserError
from backend.graph.linked import load_linked_entities_context
from backend.graph.linked_format import format_full
from backend.vocabulary import EntityKind


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
