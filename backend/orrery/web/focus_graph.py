"""The focus as a small graph you can read: the focused entity at the top, each linked entity on its
own row below, joined to it by a branch, its name on one line and its relation (with direction) and
state on the next. Rows never overlap, so no label covers another; the SVG is drawn at its own pixel
size (labels 13-15 px at 100% zoom). Past `MAX_NODES` rows the rest sit in a second SVG behind a
"N more" disclosure. Laid out here and drawn by a template: no script, no CDN, no `style=` attribute
(the CSP forbids them), colours through CSS classes by state."""

from __future__ import annotations

from dataclasses import dataclass, replace

from orrery.graph.linked import EntityLinkedContext

WIDTH = 320
TRUNK_X = 20
NODE_X = 46
LABEL_X = 62
FOCUS_Y = 24
ROW = 44
MAX_NODES = 8
NAME_CHARS = 34
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
    """One linked entity: a row of the graph."""

    id: str
    kind: str
    name: str
    short: str
    state: str
    state_class: str
    relation: str
    direction: str
    arrow: str
    y: float


@dataclass(frozen=True)
class Rows:
    """One SVG of rows: its height and where the trunk runs."""

    height: int
    trunk_top: float
    trunk_bottom: float
    nodes: list[Node]


@dataclass(frozen=True)
class FocusGraph:
    """What the template draws."""

    width: int
    name: str
    short: str
    kind: str
    focus_y: float
    shown: Rows
    more: Rows | None
    """The rows past `MAX_NODES`, behind "N more" (None when every link is shown)."""

    @property
    def x(self) -> dict[str, int]:
        """The columns: the trunk (and the focus), the nodes, their labels."""
        return {"trunk": TRUNK_X, "node": NODE_X, "label": LABEL_X}

    @property
    def hidden(self) -> int:
        return len(self.more.nodes) if self.more else 0

    @property
    def nodes(self) -> list[Node]:
        return self.shown.nodes + (self.more.nodes if self.more else [])


def state_class(state: str) -> str:
    """done / progress / blocked / open: the CSS colour class of a state."""
    return STATE_CLASSES.get(state, "open")


def shorten(name: str, limit: int = NAME_CHARS) -> str:
    """A label that fits its row, cut at a word when it can be."""
    if len(name) <= limit:
        return name
    cut = name[:limit].rsplit(" ", 1)[0]
    return (cut if len(cut) >= limit // 2 else name[:limit]) + "…"


def _rows(items: list[Node], first_y: float, trunk_top: float) -> Rows:
    nodes = [replace(n, y=round(first_y + ROW * i, 1)) for i, n in enumerate(items)]
    bottom = nodes[-1].y if nodes else trunk_top
    return Rows(height=int(bottom + ROW / 2), trunk_top=trunk_top, trunk_bottom=bottom, nodes=nodes)


def focus_graph(linked: EntityLinkedContext) -> FocusGraph:
    """The focus, then its links in the order the inspector lists them."""
    items = [
        Node(
            id=str(e.id),
            kind=e.kind,
            name=e.name,
            short=shorten(e.name),
            state=e.state,
            state_class=state_class(e.state),
            relation=e.relation.replace("_", " "),
            direction=e.direction,
            arrow="→" if e.direction == "outgoing" else "←",
            y=0.0,
        )
        for group in linked.linked.values()
        for e in group
    ]
    shown = _rows(items[:MAX_NODES], FOCUS_Y + ROW, FOCUS_Y + 14)
    rest = items[MAX_NODES:]
    return FocusGraph(
        width=WIDTH,
        name=linked.source_name,
        short=shorten(linked.source_name, NAME_CHARS - 4),
        kind=linked.source_kind,
        focus_y=FOCUS_Y,
        shown=shown,
        more=_rows(rest, ROW / 2, 0) if rest else None,
    )
