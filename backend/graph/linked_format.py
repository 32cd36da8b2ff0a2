"""Linked entities as markdown: abbreviated for the system prompt, full for the tool.

Names and descriptions come from the database and are treated as data: one line, markdown control
characters escaped (`inline_data`).
"""

from __future__ import annotations

from backend.graph.linked import GROUPS, EntityLinkedContext, LinkedEntity
from backend.text import inline_data
from backend.tokens import TokenCounter

ABBREVIATED_PER_TYPE = 3
HINT = "_Use `get_linked_entities` tool to see full details including descriptions._"
DIRECTIONS = (
    "Direction: **outgoing** means this {kind} points to the other entity "
    "(this {kind} `belongs_to_plan` X: it is part of plan X); **incoming** means the other entity points "
    "to this {kind} (task X `depends_on` this {kind}: X waits for it)."
)
TITLES = {
    "plans": "Plans",
    "goals": "Goals",
    "tasks": "Dependent Tasks",
    "milestones": "Milestones",
    "documents": "Documents",
    "outputs": "Outputs",
}
SINGULAR = {
    "plans": "plan",
    "goals": "goal",
    "tasks": "task",
    "milestones": "milestone",
    "documents": "document",
    "outputs": "output",
}


def _relation(item: LinkedEntity) -> str:
    if item.direction == "project":
        return "project context document"
    marker = " (project context document)" if item.is_context_document else ""
    incoming = " (incoming)" if item.direction == "incoming" else ""
    return f"{item.relation}{incoming}{marker}"


def abbreviated_line(item: LinkedEntity) -> str:
    """`- **Name** [id] (state) - relation`."""
    return f"- **{inline_data(item.name)}** [{item.id}] ({inline_data(item.state)}) - {_relation(item)}"


def abbreviated_blocks(
    ctx: EntityLinkedContext, per_type: int | dict[str, int] = ABBREVIATED_PER_TYPE
) -> list[tuple[str, str]]:
    """The abbreviated section as `(key, markdown)` blocks: intro, one block per type, hint.

    `per_type` is one limit for every type, or a limit per group name.
    """
    limits = per_type if isinstance(per_type, dict) else dict.fromkeys(GROUPS.values(), per_type)
    blocks = [
        (
            "intro",
            f"This {ctx.source_kind} has the following relationships:\n\n"
            + DIRECTIONS.format(kind=ctx.source_kind),
        )
    ]
    if ctx.total == 0:
        blocks.append(("none", f"No linked entities: this {ctx.source_kind} has no relationships yet."))
        return blocks
    for group in GROUPS.values():
        count = ctx.counts.get(group, 0)
        if not count:
            continue
        shown = ctx.linked[group][: limits.get(group, ABBREVIATED_PER_TYPE)]
        cut = f", showing first {len(shown)}" if count > len(shown) else ""
        lines = (
            [f"### {TITLES[group]} ({count} linked{cut})", ""]
            if shown
            else [f"### {TITLES[group]} ({count} linked)"]
        )
        lines += [abbreviated_line(item) for item in shown]
        if count > len(shown):
            more = count - len(shown)
            lines.append(f"- ... and {more} more {SINGULAR[group]}{'s' if more != 1 else ''}")
        blocks.append((f"group:{group}", "\n".join(lines)))
    blocks.append(("hint", HINT))
    return blocks


def abbreviated_within(
    ctx: EntityLinkedContext, budget: int, counter: TokenCounter, title: str = "## Linked Entities"
) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """Abbreviated blocks that fit `budget` (with the title), and how many items each type shows.

    Starts at 3 per type; while too long, the type showing the most items gives one up (later types,
    such as outputs and documents, first on ties). Returns no blocks if even counts do not fit.
    """
    limits = {g: min(ABBREVIATED_PER_TYPE, len(ctx.linked.get(g, []))) for g in GROUPS.values()}
    order = list(GROUPS.values())
    while True:
        blocks = abbreviated_blocks(ctx, limits)
        if counter.count("\n\n".join([title, *(text for _, text in blocks)])) <= budget:
            return blocks, limits
        if not any(limits.values()):
            return [], limits
        group = max(order, key=lambda g: (limits[g], order.index(g)))
        limits[group] -= 1


def format_abbreviated(ctx: EntityLinkedContext, per_type: int = ABBREVIATED_PER_TYPE) -> str:
    """The whole abbreviated section as it appears in the system prompt."""
    return "\n\n".join(["## Linked Entities", *(text for _, text in abbreviated_blocks(ctx, per_type))])


def format_full(ctx: EntityLinkedContext) -> str:
    """Every linked entity with state, type, relationship, direction and full description."""
    lines = [f"## Linked Entities for: {inline_data(ctx.source_name)} [{ctx.source_id}]"]
    if ctx.total == 0:
        lines += ["", f"This {ctx.source_kind} has no linked entities."]
    for group in GROUPS.values():
        items = ctx.linked.get(group, [])
        if not items:
            continue
        lines += ["", f"### {TITLES[group]} ({ctx.counts[group]} total)"]
        for item in items:
            lines += ["", f"#### {inline_data(item.name)} [{item.id}]", ""]
            lines.append(f"- **State:** {inline_data(item.state)}")
            lines.append(f"- **Type:** {inline_data(item.type_key or '-')}")
            if item.direction == "project":
                lines.append("- **Relationship:** project context document (not linked by an edge)")
            else:
                lines.append(f"- **Relationship:** {item.relation} ({item.direction})")
            if item.is_context_document:
                lines.append("- **Project context document:** yes")
            if item.due_at is not None:
                lines.append(f"- **Due:** {item.due_at.date().isoformat()}")
            lines.append(
                f"- **Description:** {inline_data(item.description) if item.description else '(none)'}"
            )
    return "\n".join(lines)
