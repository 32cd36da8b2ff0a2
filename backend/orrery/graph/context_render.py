"""How build_context items read in a prompt: structured markdown, narrative prose, or an outline.

Every name and description is stored data, escaped with `inline_data`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from orrery.text import inline_data
from orrery.tokens import TokenCounter

RELATED_DESCRIPTION_TOKENS = 60
"""Related items carry at most this much description, so the budget spreads over more items."""
PRIMARY_DESCRIPTION_TOKENS = 400


class Node(NamedTuple):
    """An entity as build_context sees it (a tuple: a hub's traversal builds thousands)."""

    id: str
    kind: str
    name: str
    state: str
    type_key: str | None
    description: str | None
    due_at: datetime | None
    age_days: float
    """Days since it was last updated."""
    goal_type: str | None = None
    show_fields: bool = True
    """False when the request said `include.fields: false`: state, type and due date are left out."""


def _fields(node: Node) -> str:
    """`, open, due 2026-12-01` after the kind, or nothing when fields are left out."""
    if not node.show_fields:
        return ""
    due = f", due {node.due_at.date().isoformat()}" if node.due_at else ""
    return f", {inline_data(node.state)}{due}"


def _phrase(relation: str) -> str:
    return relation.replace("_", " ")


def header(seeds: Sequence[Node], fmt: str, incremental: bool) -> str:
    """The first line(s) of the rendered context."""
    names = ", ".join(inline_data(s.name) for s in seeds) or "earlier seeds"
    more = " (additional items)" if incremental else ""
    if fmt == "narrative":
        return f"Context for {names}{more}."
    if fmt == "outline":
        return f"Context: {names}{more}"
    return f"# Context: {names}{more}"


def primary(node: Node, fmt: str, counter: TokenCounter, with_description: bool) -> str:
    """A seed entity with its fields and content."""
    description = ""
    if with_description and node.description:
        description = counter.truncate(inline_data(node.description), PRIMARY_DESCRIPTION_TOKENS)
    fields = _fields(node)
    if fmt == "narrative":
        text = f"{inline_data(node.name)} is a {node.kind}{f' ({fields[2:]})' if fields else ''}."
        return f"{text} {description}".strip()
    if fmt == "outline":
        line = f"- {inline_data(node.name)} [{node.id}] ({node.kind}{fields})"
        return f"{line}\n  - {description}" if description else line
    state = f" · State: {fields[2:]}" if fields else ""
    lines = [f"## {inline_data(node.name)} [{node.id}]", f"- Kind: {node.kind}{state}"]
    if node.type_key and node.show_fields:
        lines.append(f"- Type: {inline_data(node.type_key)}")
    if description:
        lines.append(description)
    return "\n".join(lines)


def related(
    node: Node,
    relation: str,
    direction: str,
    via: Node,
    distance: int,
    score: float,
    fmt: str,
    counter: TokenCounter,
    with_description: bool,
    level: int | None = None,
) -> str:
    """A related entity and how it connects to the item it was reached from.

    `level` is the outline indentation (defaults to the distance).
    """
    description = ""
    if with_description and node.description:
        description = counter.truncate(inline_data(node.description), RELATED_DESCRIPTION_TOKENS)
    name, via_name, state = inline_data(node.name), inline_data(via.name), inline_data(node.state)
    if node.kind == "kb_entry":  # its "state" is its collection
        return _knowledge(node, name, state, description, score, fmt, level or distance)
    fields = _fields(node)
    if fmt == "narrative":
        link = (
            f"{via_name} {_phrase(relation)} {name}"
            if direction == "outgoing"
            else f"{name} {_phrase(relation)} {via_name}"
        )
        return f"{link} ({node.kind}{fields}). {description}".strip()
    if fmt == "outline":
        indent = "  " * ((level or distance) - 1)
        line = f"{indent}- {name} [{node.id}] ({node.kind}{fields}) — {relation} ({direction})"
        if (level or distance) < distance:
            line += f" via {via_name}"
        return f"{line}\n{indent}  - {description}" if description else line
    head = (
        f"### {name} [{node.id}] ({node.kind}{fields})\n"
        f"- {relation} ({direction}) via {via_name} · distance {distance} · score {score:.2f}"
    )
    return f"{head}\n{description}" if description else head


def _knowledge(
    node: Node, name: str, collection: str, description: str, score: float, fmt: str, level: int
) -> str:
    """A knowledge-base entry among the related items."""
    if fmt == "narrative":
        return f"Domain knowledge {name} ({collection}). {description}".strip()
    if fmt == "outline":
        indent = "  " * (level - 1)
        line = f"{indent}- {name} (knowledge base, {collection})"
        return f"{line}\n{indent}  - {description}" if description else line
    head = f"### {name} (knowledge base, {collection})\n- matches the topic · score {score:.2f}"
    return f"{head}\n{description}" if description else head
