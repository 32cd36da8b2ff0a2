"""The focus as a small graph: the focused entity in the middle, its linked entities around it, one
line per link labelled with the relation. Laid out here and drawn by a template as inline SVG: no
script, no CDN, no `style=` attribute (the CSP forbids them), colours through CSS classes by state."""

from __future__ import annotations

import math
from dataclasses import dataclass

from orrery.graph.linked import EntityLinkedContext

WIDTH, HEIGHT = 480, 300
CENTER = (WIDTH / 2, HEIGHT / 2)
RADII = (165, 105)
MAX_NODES = 12
NAME_CHARS = 18
STATE_CLASSES = {
    "done": "done",
    "completed": "done",
    "achieved": "done",
    "in_progress": "progress",
    "active": "progress",
    "blocked": "blocked",
}


@dataclass(frozen=True)
class Node:
    """One linked entity on the graph."""

    id: str
    kind: str
    name: str
    short: str
    state: str
    state_class: str
    relation: str
    direction: str
    x: float
    y: float
    label_x: float
    label_y: float


@dataclass(frozen=True)
class FocusGraph:
    """What the template draws."""

    width: int
    height: int
    cx: float
    cy: float
    name: str
    short: str
    kind: str
    nodes: list[Node]
    hidden: int
    """Linked entities not drawn (more than `MAX_NODES`); the list below names them."""


def state_class(state: str) -> str:
    """done / progress / blocked / open: the CSS colour class of a state."""
    return STATE_CLASSES.get(state, "open")


def shorten(name: str, limit: int = NAME_CHARS) -> str:
    """A label that fits next to a node, cut at a word when it can be."""
    if len(name) <= limit:
        return name
    cut = name[:limit].rsplit(" ", 1)[0]
    return (cut if len(cut) >= limit // 2 else name[:limit]) + "…"


def focus_graph(linked: EntityLinkedContext) -> FocusGraph:
    """Nodes evenly around an ellipse, the first at the top, in the order the inspector lists them."""
    items = [e for group in linked.linked.values() for e in group]
    shown = items[:MAX_NODES]
    nodes = []
    for i, e in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(shown), 1)
        x = CENTER[0] + RADII[0] * math.cos(angle)
        y = CENTER[1] + RADII[1] * math.sin(angle)
        below = math.sin(angle) >= -0.2
        nodes.append(
            Node(
                id=str(e.id),
                kind=e.kind,
                name=e.name,
                short=shorten(e.name),
                state=e.state,
                state_class=state_class(e.state),
                relation=e.relation.replace("_", " "),
                direction=e.direction,
                x=round(x, 1),
                y=round(y, 1),
                label_x=round(x, 1),
                label_y=round(y + (22 if below else -14), 1),
            )
        )
    return FocusGraph(
        width=WIDTH,
        height=HEIGHT,
        cx=CENTER[0],
        cy=CENTER[1],
        name=linked.source_name,
        short=shorten(linked.source_name, 22),
        kind=linked.source_kind,
        nodes=nodes,
        hidden=max(0, len(items) - len(shown)),
    )
