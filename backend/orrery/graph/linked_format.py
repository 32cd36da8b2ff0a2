"""Linked entities as markdown: abbreviated for the system prompt, full for the tool.

The abbreviated section opens with Entity Relationships guidance for the relations present
(`relation_roles`), shows up to 3 items per kind within its budget (the guide is counted apart, so
it never pushes a type below 3), says how many more there are, and hands back a receipt line for
every entity it left out. Names and descriptions come from the
database and are treated as data: one line, markdown control characters escaped (`inline_data`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from orrery.graph.linked import GROUPS, EntityLinkedContext, LinkedEntity
from orrery.graph.relation_roles import guide_lines, is_done
from orrery.sections import SECTION_JOINT, ReceiptItem, frame_tokens, items_cost
from orrery.text import inline_data
from orrery.tokens import TokenCounter

ABBREVIATED_PER_TYPE = 3
ABBREVIATED_MAX_TOKENS = 500
"""The section's cap whatever the model's window (the seed's ~500 tokens for linked entities)."""
RECEIPT_PER_TYPE = 50
"""Linked entities loaded per type for the section: the 3 shown plus names for the receipt's cut list."""
NONE = "No linked entities: this {kind} has no relationships yet."
HINT = "_Use the `get_linked_entities` tool for full details and descriptions._"
INTRO = "How to use this {kind}'s links (→ it points there; ← points here):"
GUIDE_TITLE = "### Entity Relationships"
TITLES = {
    "plans": "Plans",
    "goals": "Goals",
    "tasks": "Tasks",
    "milestones": "Milestones",
    "documents": "Documents",
    "outputs": "Outputs",
}
PROGRESS_GROUPS = ("tasks", "milestones")
"""Groups whose heading also says how many are done (progress is read from there)."""
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
    arrow = "←" if item.direction == "incoming" else "→"
    marker = ", project context document" if item.is_context_document else ""
    waits = (
        f"; waits on {item.open_dependencies} open"
        if item.open_dependencies and not is_done(item.state)
        else ""
    )
    return f"{arrow} {item.relation}{marker}{waits}"


def abbreviated_line(item: LinkedEntity) -> str:
    """`- Name [id] state → relation` (`←` when the entity points here; `; waits on N open` when it
    depends on unfinished work); the id is the UUID's 32 hex digits (every tool, route and command
    accepts that form): 4 tokens less per item."""
    return f"- {inline_data(item.name)} [{item.id.hex}] {inline_data(item.state)} {_relation(item)}"


ABBREVIATED_LINE = re.compile(r"^- (.+?) \[([0-9a-f]{32})\] (\S+) (.+?)(?:; waits on (\d+) open)?$")


def parse_abbreviated_line(line: str) -> tuple[str, str, str] | None:
    """`(name, state, relation)` of an abbreviated line, the relation in words (`depends_on
    (incoming)`); None for any other line. The offline model reads the prompt with this."""
    match = ABBREVIATED_LINE.match(line.strip())
    if not match:
        return None
    name, _id, state, relation, _waits = match.groups()
    if relation.startswith("← "):
        relation = f"{relation[2:]} (incoming)"
    return name, state, relation.removeprefix("→ ")


def group_title(group: str, source_kind: str) -> str:
    """`Dependent Tasks` around a task (the seed's name), `Tasks` around a plan, goal or milestone."""
    return "Dependent Tasks" if group == "tasks" and source_kind == "task" else TITLES[group]


def _group_head(ctx: EntityLinkedContext, group: str, shown: int) -> str:
    count = ctx.counts[group]
    done = f", {ctx.done.get(group, 0)} done" if group in PROGRESS_GROUPS else ""
    of = f"{shown} of " if count > shown else ""
    return f"### {group_title(group, ctx.source_kind)} ({of}{count} linked{done})"


def _overflow(more: int) -> str:
    return f"- … and {more} more (use get_linked_entities)"


def _group_text(ctx: EntityLinkedContext, group: str, lines: list[str]) -> str:
    count = ctx.counts[group]
    head = _group_head(ctx, group, len(lines))
    body = [head, "", *lines] if lines else [head]
    if count > len(lines):
        body.append(_overflow(count - len(lines)))
    return "\n".join(body)


def guide_text(ctx: EntityLinkedContext) -> str:
    """The Entity Relationships block: how to use each relation present (seed 001's guidance)."""
    items = [i for g in GROUPS.values() for i in ctx.linked.get(g, [])]
    lines = [GUIDE_TITLE, "", INTRO.format(kind=ctx.source_kind), *guide_lines(items)]
    return "\n".join(lines)


def abbreviated_blocks(
    ctx: EntityLinkedContext, per_type: int | dict[str, int] = ABBREVIATED_PER_TYPE
) -> list[tuple[str, str]]:
    """The abbreviated section as `(key, markdown)` blocks: relationship guide, one block per type,
    hint. `per_type` is one limit for every type, or a limit per group name."""
    limits = per_type if isinstance(per_type, dict) else dict.fromkeys(GROUPS.values(), per_type)
    if ctx.total == 0:
        return [("none", NONE.format(kind=ctx.source_kind))]
    blocks = [("relationships", guide_text(ctx))]
    for group in GROUPS.values():
        if ctx.counts.get(group, 0):
            shown = ctx.linked[group][: limits.get(group, ABBREVIATED_PER_TYPE)]
            blocks.append((f"group:{group}", _group_text(ctx, group, [abbreviated_line(i) for i in shown])))
    blocks.append(("hint", HINT))
    return blocks


@dataclass
class FittedBlocks:
    """Blocks that fit, each with its token count, how many items each type shows, and every
    linked entity left out (name, kind, reason) for the receipt."""

    blocks: list[tuple[str, str]]
    tokens: list[int]
    shown: dict[str, int]
    excluded: list[ReceiptItem] = field(default_factory=list)
    budget: int = 0
    """The section's budget: the items' budget plus the relationship guide, counted apart."""


def left_out(ctx: EntityLinkedContext, shown: dict[str, int], fits: bool) -> list[ReceiptItem]:
    """A receipt line for every linked entity not shown: beyond the per-type cap, or cut for the
    budget (everything, when not even the counts fit); entities past what was loaded, one line."""
    out: list[ReceiptItem] = []
    for group in GROUPS.values():
        items = ctx.linked.get(group, [])
        for i, item in enumerate(items[shown.get(group, 0) :], start=shown.get(group, 0)):
            capped = fits and i >= ABBREVIATED_PER_TYPE
            reason = f"per-type cap of {ABBREVIATED_PER_TYPE}" if capped else "over budget"
            out.append(ReceiptItem(item.kind, f"{item.name} ({item.kind})", None, reason))
        unloaded = ctx.counts.get(group, 0) - len(items)
        if unloaded > 0:
            reason = f"per-type cap of {ABBREVIATED_PER_TYPE}" if fits else "over budget"
            out.append(ReceiptItem(SINGULAR[group], f"{unloaded} more {group}", None, reason))
    return out


def abbreviated_within(
    ctx: EntityLinkedContext,
    budget: int,
    counter: TokenCounter,
    title: str = "Linked Entities",
    total: int | None = None,
) -> FittedBlocks:
    """Abbreviated blocks that fit `budget` as a prompt section titled `title` (frame included,
    counted as the prompt assembly counts it; the guide counted apart, the whole within `total`), how
    many items each type shows, and what was cut.

    Every line is rendered and counted once; the limits then shrink by arithmetic (from 3 per type,
    the type showing the most items gives one up, later types such as outputs first on ties), and
    the chosen section is counted exactly once to confirm. The guide and the hint stay while any
    block is shown; no blocks come back when even the counts do not fit.
    """
    cost = cache(counter.count)  # each distinct text counted once per call
    sep, newline = cost("\n\n"), cost("\n")
    frame = frame_tokens(title, "\n\n", counter)
    if ctx.total == 0:
        fixed = abbreviated_blocks(ctx)
        tokens = [cost(t) for _, t in fixed]
        fits = frame + items_cost(tokens, sep) <= budget
        return FittedBlocks(fixed if fits else [], tokens if fits else [], {})
    guide, hint = guide_text(ctx), HINT
    budget += cost(guide) + sep  # the guide, counted apart (3 per type fit at the seed's ~500 tokens)
    budget = budget if total is None else min(budget, total)
    order = [g for g in GROUPS.values() if ctx.counts.get(g, 0)]
    lines = {g: [abbreviated_line(i) for i in ctx.linked[g][:ABBREVIATED_PER_TYPE]] for g in order}
    line_tokens = {g: [cost(line) for line in lines[g]] for g in order}
    limits = {g: len(lines[g]) for g in order}

    def group_cost(g: str) -> int:
        n, count = limits[g], ctx.counts[g]
        head = cost(_group_head(ctx, g, n))
        body = sum(line_tokens[g][:n]) + (sep + newline * (n - 1) if n else 0)
        more = cost(_overflow(count - n)) + newline if count > n else 0
        return head + body + more

    while True:
        tokens = [cost(guide), *(group_cost(g) for g in order), cost(hint)]
        if frame + items_cost(tokens, sep) <= budget:
            blocks = [
                ("relationships", guide),
                *((f"group:{g}", _group_text(ctx, g, lines[g][: limits[g]])) for g in order),
                ("hint", hint),
            ]
            exact = counter.count("\n\n".join([f"## {title}", *(t for _, t in blocks)]))
            if exact + counter.count(SECTION_JOINT) <= budget:
                shown = dict.fromkeys(GROUPS.values(), 0) | limits
                tokens = [cost(t) for _, t in blocks]
                return FittedBlocks(blocks, tokens, shown, left_out(ctx, shown, fits=True), budget)
        if not any(limits.values()):
            none = dict.fromkeys(GROUPS.values(), 0)
            return FittedBlocks([], [], none, left_out(ctx, none, fits=False), budget)
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
        lines += ["", f"### {group_title(group, ctx.source_kind)} ({ctx.counts[group]} total)"]
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
            if item.open_dependencies and not is_done(item.state):
                lines.append(f"- **Waits on:** {item.open_dependencies} unfinished dependencies")
            if item.due_at is not None:
                lines.append(f"- **Due:** {item.due_at.date().isoformat()}")
            lines.append(
                f"- **Description:** {inline_data(item.description) if item.description else '(none)'}"
            )
    return "\n".join(lines)
