"""How the offline model answers about an entity the question names ("When is the legal review due,
and what does it block?"), or about the focus when the question asks when / who / what state.

- `aspects` reads what is asked: when (due), who (owner), state, what it blocks (what waits for
  it), what blocks it or what it depends on, what is next, which plans/goals it belongs to.
- `named_terms` are the words left once question and relation words are dropped: the name to
  look up with `find_entities`; `pick` chooses the best item of its answer.
- `answer_entity` says each asked aspect from the item's fields (state, due date, plans) and,
  when a link is asked, from `get_linked_entities`' answer for it.
- `answer_ready` is the project's "what should I work on next?" (no focus, no name); "and after
  that?" then asks about the first item named in the previous reply: what finishing it frees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orrery.agents.offline_answers import DEPENDENCY_RELATIONS, Link, answer_next, answer_progress
from orrery.graph.relation_roles import is_done
from orrery.text import search_terms

ASPECTS: dict[str, re.Pattern[str]] = {
    "when": re.compile(r"\bwhen\b|\bdue\b|\bdeadline\b|\bdate\b", re.I),
    "who": re.compile(r"\bwho\b|\bowns?\b|\bowner\b|\bassign", re.I),
    "state": re.compile(r"\bstate\b|\bstatus\b", re.I),
    "blocks": re.compile(
        r"\b(?:does|do|will|would)\b[^?.]*\bblock\b|\bwaits?\s+(?:on|for)\s+(?:it|this)\b", re.I
    ),
    "depends": re.compile(r"\bdepends?\s+on\b|\bneeds?\s+first\b", re.I),
    "blockers": re.compile(
        r"\bblocks\b|\bblocking\b|\bblocked\b|\bblockers?\b|\bholding\b.*\bup\b|\bwaiting\s+(?:on|for)\b",
        re.I,
    ),
    "next": re.compile(r"\bnext\b|\bwork\s+on\b", re.I),
    "after": re.compile(r"\bafter\s+(?:that|this|it)\b", re.I),
    "progress": re.compile(r"\bhow\s+far\b|\bprogress\b", re.I),
    "group": re.compile(r"\b(?:what|which)\s+(plans?|goals?|milestones?)\b", re.I),
}
_QUESTION_WORDS = frozenset(
    """when due deadline date who owns own owner owners assigned assignee state status block blocks
    blocked blocking blocker blockers depend depends dependent dependency wait waits waiting hold
    holding next work working after that belong belongs support supports task tasks plan plans goal
    goals milestone milestones document documents output outputs show tell need needs first far along
    progress going please know current currently right now still does done finished open left what
    whats which us me we let get""".split()  # noqa: SIM905
)
_ITEM = re.compile(r"^#### (.+?) \[([0-9a-f-]{32,36})\]$")
_FIELD = re.compile(r"^- \*\*(Kind|State|Due|Plans|Waits on|Waited on by):\*\* (.*)$")


@dataclass(frozen=True)
class Item:
    """One entity as `find_entities` printed it."""

    name: str
    id: str
    fields: dict[str, str]

    @property
    def kind(self) -> str:
        return self.fields.get("Kind", "entity")


def aspects(question: str) -> list[str]:
    """What the question asks, in the order answers are given."""
    asked = [name for name, pattern in ASPECTS.items() if pattern.search(question)]
    if (
        "blocks" in asked
        and "blockers" in asked
        and not re.search(r"\bblock(?:ed|ing|ers?)\b", question, re.I)
    ):
        asked.remove("blockers")  # "what does it block?" asks what waits for it
    return asked


def named_terms(question: str) -> str:
    """The words naming an entity ("legal review"), '' when only the focus or nothing is named."""
    return " ".join(w for w in search_terms(question) if w.lower() not in _QUESTION_WORDS)


def parse_items(content: str) -> list[Item]:
    """The items of `find_entities`' answer, in its order (best first)."""
    items: list[Item] = []
    for line in content.splitlines():
        if head := _ITEM.match(line):
            items.append(Item(head.group(1), head.group(2), {}))
        elif (field := _FIELD.match(line)) and items:
            items[-1].fields[field.group(1)] = field.group(2)
    return items


def _head(item: Item) -> str:
    plans = item.fields.get("Plans")
    where = f" in {plans}" if plans else ""
    due = item.fields.get("Due", "no due date")
    due_text = "it has no due date" if due == "no due date" else f"it is due {due}"
    state = item.fields.get("State", "of unknown state")
    return f"The {item.kind} **{item.name}**{where} is {state}; {due_text}."


def _names(links: list[Link]) -> str:
    return "\n".join(f"- **{x.name}** ({x.state or 'no state'})" for x in links)


def _link_answer(aspect: str, item: Item, links: list[Link], question: str) -> str | None:
    subject = f"the {item.kind} **{item.name}**"
    deps = [x for x in links if x.relation in DEPENDENCY_RELATIONS]
    if aspect == "blocks":
        waiting = [x for x in deps if x.direction == "incoming"]
        if not waiting:
            return f"It blocks nothing: no other entity depends on {subject}."
        n = len(waiting)
        which = "item, which waits" if n == 1 else "items, which wait"
        return f"It blocks {n} {which} for it:\n\n{_names(waiting)}"
    if aspect in ("blockers", "depends"):
        needs = [x for x in deps if x.direction == "outgoing"]
        open_ = [x for x in needs if not is_done(x.state)]
        if aspect == "depends":
            return (
                f"It depends on {len(needs)}:\n\n{_names(needs)}"
                if needs
                else f"{subject} depends on nothing."
            )
        if not open_:
            return f"Nothing blocks it: everything {subject} depends on is done."
        n = len(open_)
        return f"It is blocked by {n} unfinished {'item' if n == 1 else 'items'}:\n\n{_names(open_)}"
    if aspect == "next":
        return answer_next(subject, links)
    if aspect == "after":
        waiting = [x for x in deps if x.direction == "incoming" and x.kind == "task" and not is_done(x.state)]
        freed = [x for x in waiting if x.open_dependencies <= 1]
        if not freed:
            return f"Nothing waits only on {subject}, so finishing it frees no other task by itself."
        return f"Once it is done, these can start (they wait on nothing else unfinished):\n\n{_names(freed)}"
    if aspect == "progress":
        return answer_progress(subject, links, item.fields.get("State"))
    if aspect == "group":
        asked = ASPECTS["group"].search(question)
        kind = asked.group(1).lower().rstrip("s") if asked else "plan"
        chosen = [x for x in links if x.kind == kind]
        return f"Its {kind}s:\n\n{_names(chosen)}" if chosen else f"{subject} has no linked {kind}s."
    return None


def answer_entity(question: str, item: Item, links: list[Link] | None) -> str:
    """Each asked aspect of one entity, its fields first, then what its links answer."""
    asked = aspects(question)
    parts = [_head(item)]
    if "who" in asked:
        parts.append(
            f"No owner is recorded for it: Orrery's {item.kind}s carry no assignee, only state, dates "
            "and links."
        )
    for aspect in asked:
        said = _link_answer(aspect, item, links, question) if links is not None else None
        if said:
            parts.append(said)
    return "\n\n".join(parts)


def needs_links(question: str) -> bool:
    """Whether the answer needs the entity's links (not only its own fields)."""
    return bool(set(aspects(question)) - {"when", "who", "state"})


def answer_ready(items: list[Item]) -> str:
    """The project's open tasks that wait on nothing unfinished, in progress first."""
    ready = [x for x in items if x.fields.get("Waits on", "0").startswith("0")]
    if not ready:
        return "Every open task of this project waits on something unfinished, so nothing is ready to start."
    lines = []
    for x in ready[:5]:
        plans = f", {x.fields['Plans']}" if x.fields.get("Plans") else ""
        lines.append(f"- **{x.name}** ({x.fields.get('State', '?')}{plans})")
    return (
        "Ready to work on now (open, and waiting on nothing unfinished), what is in progress and unblocks "
        "the most first:\n\n" + "\n".join(lines)
    )
