"""The focus of a chat as prompt sections: the focused entity and its linked entities.

Only an entity focus (optionally inside a project) loads linked entities; a project focus shows the
project; a chat without focus adds nothing.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession, Entity, Project
from orrery.graph.linked import linked_context_for
from orrery.graph.linked_format import (
    ABBREVIATED_MAX_TOKENS,
    RECEIPT_PER_TYPE,
    FittedBlocks,
    abbreviated_within,
)
from orrery.repo.graph import get_entity
from orrery.repo.linked_cache import linked_cache
from orrery.sections import ContextSection
from orrery.text import inline_data
from orrery.tokens import Budgets, TokenCounter
from orrery.vocabulary import ENTITY_KINDS

LINKED_TITLE = "Linked Entities"


def _entity_text(entity: Entity, budget: int, counter: TokenCounter) -> str:
    lines = [
        f"You are focused on the {entity.kind} **{inline_data(entity.name)}** [{entity.id}].",
        f"- **State:** {inline_data(entity.state)}",
    ]
    if entity.type_key:
        lines.append(f"- **Type:** {inline_data(entity.type_key)}")
    if entity.goal_type:
        lines.append(f"- **Goal type:** {entity.goal_type}")
    if entity.due_at:
        lines.append(f"- **Due:** {entity.due_at.date().isoformat()}")
    head = "\n".join(lines)
    if entity.description:
        room = budget - counter.count(head) - counter.count("\n- **Description:** ") - 12
        description = counter.truncate(inline_data(entity.description), max(0, room))
        if description:
            head += f"\n- **Description:** {description}"
    return head


async def _focused_entity(
    session: AsyncSession, user_id: uuid.UUID, focus_id: uuid.UUID, focus: Entity | None
) -> Entity:
    """`focus` when it is the focused entity the caller just read, else read for this user."""
    if focus is not None and focus.id == focus_id:
        return focus
    return await get_entity(session, user_id, focus_id)


async def focus_sections(
    session: AsyncSession,
    user_id: uuid.UUID,
    chat: ChatSession,
    budgets: Budgets,
    counter: TokenCounter,
    focus: Entity | None = None,
) -> list[ContextSection]:
    """Sections for the chat's focus (empty without one); linked entities fit the related budget,
    capped at ABBREVIATED_MAX_TOKENS whatever the window (the relationship guide on top), and every
    entity left out is named in the section's `excluded` receipt lines (per-type cap or budget).
    `focus` is the focused entity when the caller has just read it for this user (one read fewer
    per turn)."""
    if chat.focus_kind is None or chat.focus_id is None:
        return []
    if chat.focus_kind == "project":
        project = await session.get(Project, chat.focus_id)
        if project is None:
            return []
        text = f"You are focused on the project **{inline_data(project.name)}** [{project.id}]."
        if project.description:
            description = counter.truncate(inline_data(project.description), budgets.focus // 2)
            text += f"\n- **Description:** {description}"
        return [ContextSection("focus", "Current Focus", [(f"project:{project.id}", text)])]
    if chat.focus_kind not in ENTITY_KINDS:
        return []
    entity = await _focused_entity(session, user_id, chat.focus_id, focus)
    sections = [
        ContextSection(
            "focus",
            "Current Focus",
            [
                (
                    f"{entity.kind}:{entity.id}",
                    _entity_text(entity, budgets.focus - counter.count("## Current Focus\n"), counter),
                )
            ],
        )
    ]
    room = min(budgets.related, ABBREVIATED_MAX_TOKENS)
    variant = ("abbreviated", room, budgets.related, counter.encoding_name)  # fitted once
    fitted: FittedBlocks | None = linked_cache.get(entity.id, variant, entity.graph_version)
    if fitted is None:
        linked = await linked_context_for(session, entity, max_per_type=RECEIPT_PER_TYPE)
        fitted = abbreviated_within(linked, room, counter, LINKED_TITLE, total=budgets.related)
        linked_cache.put(entity.id, variant, entity.graph_version, fitted)
    if fitted.blocks or fitted.excluded:  # nothing fits: the receipt still lists every cut entity
        sections.append(
            ContextSection(
                "related",
                LINKED_TITLE,
                fitted.blocks,
                separator="\n\n",
                tokens=fitted.tokens,
                budget=fitted.budget or room,  # the guide is counted apart
                excluded=fitted.excluded,
            )
        )
    return sections
