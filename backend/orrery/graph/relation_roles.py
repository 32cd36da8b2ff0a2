"""What each relation means for the focused entity, in one place: which neighbours are its work
(progress), which it waits for (blockers), which wait for it, which are references.

The Entity Relationships guidance in the prompt and the offline model's focus answers both read
these rules, so the model is told exactly what the offline answers compute.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, TypeVar

DONE_STATES = ("done", "completed", "complete", "achieved", "closed", "cancelled", "archived")
"""States in which an item is finished: never a blocker, counted as done for progress."""
BLOCKED_STATE = "blocked"
Role = Literal[
    "work",
    "blocker",
    "waiting",
    "parent",
    "goal",
    "milestone",
    "contributor",
    "reference",
    "output",
    "related",
]


class LinkLike(Protocol):
    """What the rules need of a linked item (a `LinkedEntity` or the offline model's parsed link)."""

    @property
    def kind(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def relation(self) -> str: ...
    @property
    def direction(self) -> str: ...
    @property
    def open_dependencies(self) -> int: ...


T = TypeVar("T", bound=LinkLike)


def is_done(state: str) -> bool:
    """Finished (done, completed, cancelled, ...): not open work, not a blocker."""
    return state.strip().lower() in DONE_STATES


_WORK_KINDS = ("task", "milestone")
_ROLES: dict[tuple[str, str], Role] = {
    ("depends_on", "outgoing"): "blocker",
    ("depends_on", "incoming"): "waiting",
    ("belongs_to_plan", "incoming"): "work",
    ("has_task", "outgoing"): "work",
    ("requires", "outgoing"): "work",
    ("supports_goal", "incoming"): "work",
    ("achieved_by", "outgoing"): "work",
    ("targets_milestone", "incoming"): "work",
    ("contains", "outgoing"): "work",
    ("belongs_to_plan", "outgoing"): "parent",
    ("has_task", "incoming"): "parent",
    ("contains", "incoming"): "parent",
    ("requires", "incoming"): "goal",
    ("supports_goal", "outgoing"): "goal",
    ("achieved_by", "incoming"): "goal",
    ("targets_milestone", "outgoing"): "milestone",
}


def role(item: LinkLike) -> Role:
    """The item's role for the focus: see the module docstring."""
    if item.kind == "document" or item.relation in ("references", "referenced_by", "project_context"):
        return "reference"
    if item.kind == "output" or item.relation in ("produces", "produced_by"):
        return "output"
    found = _ROLES.get((item.relation, item.direction), "related")
    if found == "work" and item.kind not in _WORK_KINDS:
        return "contributor" if item.kind == "plan" else "related"  # context, not countable work
    return found


def work_items(items: Sequence[T]) -> list[T]:
    """The focus's own tasks and milestones (progress = done of these)."""
    return [i for i in items if role(i) == "work"]


def blockers(items: Sequence[T]) -> list[T]:
    """What the focus waits for and is not finished, plus its own work marked blocked."""
    waits = [i for i in items if role(i) == "blocker" and not is_done(i.state)]
    stuck = [i for i in work_items(items) if i.state.strip().lower() == BLOCKED_STATE]
    return waits + [i for i in stuck if i not in waits]


def is_ready(item: LinkLike) -> bool:
    """Open, not marked blocked, and not waiting on unfinished work of its own."""
    state = item.state.strip().lower()
    return not is_done(state) and state != BLOCKED_STATE and item.open_dependencies == 0


def next_items(items: Sequence[T]) -> list[T]:
    """Open items that can move now: the focus's work, else what it waits for; in-progress first."""
    pool = work_items(items) or [i for i in items if role(i) == "blocker"]
    ready = [i for i in pool if is_ready(i)]
    return sorted(ready, key=lambda i: i.state.strip().lower() not in ("in_progress", "active"))


GUIDE: dict[str, str] = {
    "work": "{rels}: its own work; progress = done of total (see the headings); next = first open one "
    "not blocked or waiting",
    "blocker": "{rels}: it waits for these; blockers while not done",
    "waiting": "{rels}: these wait for it",
    "up": "{rels}: what it is part of or works toward",
    "contributor": "{rels}: plans working toward it (context, not its own work)",
    "reference": "documents: references to consult, not work",
    "output": "outputs: its deliverables",
    "related": "{rels}: context only",
}
"""One guidance line per kind of role; `{rels}` names the relations present (`← belongs_to_plan`)."""
_LINE: dict[Role, str] = {"parent": "up", "goal": "up", "milestone": "up"}


def guide_lines(items: Iterable[LinkLike]) -> list[str]:
    """One line per role present, naming the relations (`← belongs_to_plan`) that carry it."""
    present: dict[str, list[str]] = {}
    for item in items:
        arrow = {"incoming": "← ", "outgoing": "→ "}.get(item.direction, "")
        line = _LINE.get(role(item), role(item))
        rels = present.setdefault(line, [])
        if f"{arrow}{item.relation}" not in rels:
            rels.append(f"{arrow}{item.relation}")
    return [f"- {text.format(rels=', '.join(present[key]))}" for key, text in GUIDE.items() if key in present]
