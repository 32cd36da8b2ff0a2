"""Linked entities as markdown: abbreviated for the system prompt, full for the tool.

Names and descriptions come from the database and are treated as data: one line, markdown control
characters escaped (`inline_data`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend.graph.linked import GROUPS, EntityLinkedContext, LinkedEntity
from backend.memory.sections import SECTION_JOINT, frame_tokens, items_cost
from backend.text import inline_data
from backend.tokens import TokenCounter

ABBREVIATED_PER_TYPE = 3
ABBREVIATED_MAX_TOKENS = 500
"""The section's cap whatever the model's window (the seed's ~500 tokens for linked entities)."""
NONE = "No linked entities: this {kind} has no relationships yet."
HINT = "_Use the `get_linked_entities` tool for full details and descriptions._"
INTRO = "This {kind}'s relationships (→ outgoing; ← incoming, e.g. ← depends_on: it waits for this {kind}):"
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
    arrow = "←" if item.direction == "incoming" else "→"
    marker = ", project context document" if item.is_context_document else ""
    return f"{arrow} {item.relation}{marker}"


def abbreviated_line(item: LinkedEntity) -> str:
    """`- Name [id] state → relation` (`←` when the entity points here); the id is the UUID's 32
    hex digits (every tool, route and command accepts that form): 4 tokens less per item."""
    return f"- {inline_data(item.name)} [{item.id.hex}] {inline_data(item.state)} {_relation(item)}"


ABBREVIATED_LINE = re.compile(r"^- (.+?) \[([0-9a-f]{32})\] (\S+) (.+)$")


def parse_abbreviated_line(line: str) -> tuple[str, str, str] | None:
    """`(name, state, relation)` of an abbreviated line, the relation in words (`depends_on
    (incoming)`); None for any other line. The offline model reads the prompt with this."""
    match = ABBREVIATED_LINE.match(line.strip())
    if not match:
        return None
    name, _id, state, relation = match.groups()
    if relation.startswith("← "):
        relation = f"{relation[2:]} (incoming)"
    return name, state, relation.removeprefix("→ ")


def _group_head(group: str, count: int, shown: int) -> str:
    return f"### {TITLES[group]} ({f'{shown} of ' if count > shown else ''}{count} linked)"


def _overflow(group: str, more: int) -> str:
    return f"- ... and {more} more {SINGULAR[group]}{'s' if more != 1 else ''}"


def _group_text(group: str, count: int, lines: list[str]) -> str:
    head = _group_head(group, count, len(lines))
    body = [head, "", *lines] if lines else [head]
    if count > len(lines):
        body.append(_overflow(group, count - len(lines)))
    return "\n".join(body)


def abbreviated_blocks(
    ctx: EntityLinkedContext, per_type: int | dict[str, int] = ABBREVIATED_PER_TYPE
) -> list[tuple[str, str]]:
    """The abbreviated section as `(key, markdown)` blocks: intro, one block per type, hint.

    `per_type` is one limit for every type, or a limit per group name.
    """
    limits = per_type if isinstance(per_type, dict) else dict.fromkeys(GROUPS.values(), per_type)
    blocks = [("intro", INTRO.format(kind=ctx.source_kind))]
    if ctx.total == 0:
        blocks.append(("none", NONE.format(kind=ctx.source_kind)))
        return blocks
    for group in GROUPS.values():
        count = ctx.counts.get(group, 0)
        if count:
            shown = ctx.linked[group][: limits.get(group, ABBREVIATED_PER_TYPE)]
            blocks.append((f"group:{group}", _group_text(group, count, [abbreviated_line(i) for i in shown])))
    blocks.append(("hint", HINT))
    return blocks


@dataclass
class FittedBlocks:
    """Blocks that fit, each with its token count, and how many items each type shows."""

    blocks: list[tuple[str, str]]
    tokens: list[int]
    shown: dict[str, int]


def abbreviated_within(
    ctx: EntityLinkedContext, budget: int, counter: TokenCounter, title: str = "Linked Entities"
) -> FittedBlocks:
    """Abbreviated blocks that fit `budget` as a prompt section titled `title` (frame included,
    counted as the prompt assembly counts it), and how many items each type shows.

    Every line is rendered and counted once; the limits then shrink by arithmetic (from 3 per type,
    the type showing the most items gives one up, later types such as outputs first on ties), and
    the chosen section is counted exactly once to confirm. The hint stays while any block is shown;
    no blocks come back when even the counts do not fit.
    """
    memo: dict[str, int] = {}

    def cost(text: str) -> int:
        if text not in memo:
            memo[text] = counter.count(text)
        return memo[text]

    sep, newline = cost("\n\n"), cost("\n")
    frame = frame_tokens(title, "\n\n", counter)
    intro, hint = INTRO.format(kind=ctx.source_kind), HINT
    if ctx.total == 0:
        fixed = [
            ("intro", intro),
            ("none", f"No linked entities: this {ctx.source_kind} has no relationships yet."),
        ]
        tokens = [cost(t) for _, t in fixed]
        fits = frame + items_cost(tokens, sep) <= budget
        return FittedBlocks(fixed if fits else [], tokens if fits else [], {})
    order = [g for g in GROUPS.values() if ctx.counts.get(g, 0)]
    lines = {g: [abbreviated_line(i) for i in ctx.linked[g][:ABBREVIATED_PER_TYPE]] for g in order}
    line_tokens = {g: [cost(line) for line in lines[g]] for g in order}
    limits = {g: len(lines[g]) for g in order}

    def group_cost(g: str) -> int:
        n, count = limits[g], ctx.counts[g]
        head = cost(_group_head(g, count, n))
        body = sum(line_tokens[g][:n]) + (sep + newline * (n - 1) if n else 0)
        more = cost(_overflow(g, count - n)) + newline if count > n else 0
        return head + body + more

    while True:
        tokens = [cost(intro), *(group_cost(g) for g in order), cost(hint)]
        if frame + items_cost(tokens, sep) <= budget:
            blocks = [
                ("intro", intro),
                *((f"group:{g}", _group_text(g, ctx.counts[g], lines[g][: limits[g]])) for g in order),
                ("hint", hint),
            ]
            exact = counter.count("\n\n".join([f"## {title}", *(t for _, t in blocks)]))
            if exact + counter.count(SECTION_JOINT) <= budget:
                shown = dict.fromkeys(GROUPS.values(), 0) | limits
                return FittedBlocks(blocks, [cost(t) for _, t in blocks], shown)
        if not any(limits.values()):
            return FittedBlocks([], [], dict.fromkeys(GROUPS.values(), 0))
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
