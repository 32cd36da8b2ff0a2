"""How the offline model turns tool results into answers instead of dumps.

- Links (`get_linked_entities`): direction- and state-aware, by the rules of
  `orrery.graph.relation_roles`. "What is blocking this?" lists what the focus waits for that is
  not finished (done ones are named as not blockers) and, for a plan or goal, its own open work that
  waits on unfinished work; "What does this task block?" only what waits for it; "How far along is
  it?" counts done of its tasks/milestones; "What's next?" names the first open item that waits on
  nothing; "What goals does this task support?" only goals; anything else, every link.
- Knowledge (`get_entry`): the entry's own description, quoted, with code paths and related entries.
- A Context Packet: the entry that best matches the question, or a plain "nothing relevant".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orrery.graph.relation_roles import blockers, is_done, next_items, role, work_items
from orrery.text import search_terms, stem

DEPENDENCY_RELATIONS = ("depends_on", "requires")
_BLOCKED_BY = re.compile(
    r"\bblocked\s+by\b|\bwhat\s+blocks\b|\bwhat(?:\s+is|'s|s)\s+blocking\b|\bwaiting\s+(?:on|for)\b"
    r"(?!\s+(?:this|it)\b)|\b(?:does|do)\s+(?:this|it)(?:\s+\w+)?\s+depend\s+on\b|\bprerequisites?\b"
    r"|\bblockers?\b|\bblocking\s+(?:this|it|the)\b|\bhold(?:s|ing)?\s+(?:this|it)\s+up\b|\bstuck\b",
    re.I,
)
_NEXT = re.compile(r"\bnext\b|\bwhat\s+(?:should|can|do)\s+(?:i|we)\s+(?:do|work\s+on|start|pick)\b", re.I)
_PROGRESS = re.compile(
    r"\bhow\s+far\b|\bprogress\b|\bstatus\b|\bpercent|\bcomplete|\bleft\b|\bremain|\bon\s+track\b"
    r"|\bstand\b|\bhow\s+(?:is|are)\s+(?:it|this|things)\b.*\bgoing\b|\bhow\s+(?:much|many)\b.*\bdone\b",
    re.I,
)
_BLOCKS = re.compile(
    r"\b(?:does|do|will)\s+(?:this|it)(?:\s+\w+)?\s+block\b|\bdepends?\s+on\s+(?:this|it)\b|\bwaits?\s+(?:on|for)\s+"
    r"(?:this|it)\b|\bwaiting\s+(?:on|for)\s+(?:this|it)\b|\bdependents?\b|\bdownstream\b|\bunblock",
    re.I,
)
_ASKED_KIND = re.compile(
    r"\b(plan|plans|goal|goals|milestone|milestones|document|documents|doc|docs|output|outputs)\b", re.I
)
_ITEM = re.compile(r"^#### (.+?) \[([0-9a-f-]{36})\]$")
_WAITS = re.compile(r"^- \*\*Waits on:\*\* (\d+)")
_PACKET_LINE = re.compile(r"^- \*\*([A-Z]{1,6}-[0-9]+):\*\* (.+?)(?: \(code: .+\))?$")
_GROUP = re.compile(r"^### (.+?) \(\d+ total\)$")
_GROUP_KIND = {
    "Plans": "plan",
    "Goals": "goal",
    "Dependent Tasks": "task",
    "Tasks": "task",
    "Milestones": "milestone",
    "Documents": "document",
    "Outputs": "output",
}


@dataclass(frozen=True)
class Link:
    """One linked entity as `get_linked_entities` printed it."""

    kind: str
    name: str
    state: str
    relation: str
    direction: str
    open_dependencies: int = 0
    """Unfinished entities this one depends on (`**Waits on:**`)."""


def parse_links(content: str) -> list[Link]:
    """The items of `get_linked_entities`' full format."""
    links: list[Link] = []
    kind, name, state = "", "", ""
    for line in content.splitlines():
        if group := _GROUP.match(line):
            kind = _GROUP_KIND.get(group.group(1), group.group(1).lower().rstrip("s"))
        elif item := _ITEM.match(line):
            name, state = item.group(1), ""
        elif line.startswith("- **State:** "):
            state = line.removeprefix("- **State:** ").strip()
        elif line.startswith("- **Relationship:** ") and name:
            rel = line.removeprefix("- **Relationship:** ").strip()
            relation, _, direction = rel.partition(" (")
            if relation.startswith("project context document"):
                relation, direction = "project_context", "project)"
            links.append(Link(kind, name, state, relation, direction.rstrip(")") or "outgoing"))
        elif (waits := _WAITS.match(line)) and links and links[-1].name == name:
            last = links[-1]
            links[-1] = Link(last.kind, last.name, last.state, last.relation, last.direction, int(waits[1]))
    return links


def _listing(links: list[Link], *, with_relation: bool) -> str:
    lines = []
    for link in links:
        where = f", {link.relation} ({link.direction})" if with_relation else ""
        lines.append(f"- **{link.name}** ({link.state or 'no state'}{where})")
    return "\n".join(lines)


def _waits(link: Link) -> str:
    state = link.state or "no state"
    return f"- **{link.name}** ({state}; waits on {link.open_dependencies} unfinished)"


def answer_blockers(subject: str, links: list[Link]) -> str:
    """What holds the focus up, state-aware: unfinished things it waits for (a done one is named as
    not a blocker), its own work marked blocked, and its open work waiting on unfinished work."""
    blocking = blockers(links)
    held = [
        x for x in work_items(links) if not is_done(x.state) and x.open_dependencies and x not in blocking
    ]
    done = [x for x in links if role(x) == "blocker" and is_done(x.state)]
    parts = []
    if blocking:
        n = len(blocking)
        parts.append(
            f"{_cap(subject)} is blocked by {n} {'item' if n == 1 else 'items'} that "
            f"{'is' if n == 1 else 'are'} not finished yet:\n\n{_listing(blocking, with_relation=False)}"
        )
    if held:
        lead = "Also, " if blocking else f"Nothing blocks {subject} directly, but "
        parts.append(
            f"{lead}{len(held)} of its open items wait on unfinished work:\n\n"
            + "\n".join(_waits(x) for x in held)
        )
    if not parts:
        parts.append(f"Nothing blocks {subject}: nothing it waits for is open and none of its work is stuck.")
    if done:
        names = ", ".join(f"**{x.name}**" for x in done)
        parts.append(f"Already done, so not blockers: {names}.")
    return "\n\n".join(parts)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def answer_progress(subject: str, links: list[Link], state: str | None) -> str:
    """Done of total of the focus's own tasks/milestones; for a task, of what it depends on."""
    work = work_items(links) or [x for x in links if role(x) == "blocker"]
    own = f" It is {state}." if state else ""
    if not work:
        return f"{_cap(subject)} has no linked tasks or milestones to measure progress by.{own}"
    done = [x for x in work if is_done(x.state)]
    still = [x for x in work if not is_done(x.state)]
    what = "its tasks and milestones" if work_items(links) else "the items it depends on"
    text = (
        f"{_cap(subject)} is {round(100 * len(done) / len(work))}% along: {len(done)} of {len(work)} of "
        f"{what} are done.{own}"
    )
    if still:
        text += f"\n\nStill open ({len(still)}):\n\n" + _listing(still[:8], with_relation=False)
    return text


def answer_next(subject: str, links: list[Link]) -> str:
    """The first open item that is not blocked and waits on nothing unfinished, and what follows."""
    ready = next_items(links)
    own = bool(work_items(links))
    if ready:
        first, *rest = ready
        text = (
            f"Next for {subject}: **{first.name}** ({first.state}): it is open and waits on nothing "
            "unfinished."
        )
        if rest:
            text += "\n\nAlso ready:\n\n" + _listing(rest[:3], with_relation=False)
        return text
    pool = work_items(links) if own else [x for x in links if role(x) == "blocker"]
    still = [x for x in pool if not is_done(x.state)]
    if not still:
        if own:
            return f"Everything linked to {subject} as its work is done."
        return f"Nothing {subject} depends on is open: next is {subject} itself."
    return f"Every open item of {subject} waits on something unfinished:\n\n" + "\n".join(
        _waits(x) for x in still[:6]
    )


def focus_question(question: str) -> str | None:
    """`blockers`, `next` or `progress` when the question asks how the focus stands, else None."""
    if _BLOCKED_BY.search(question):
        return "blockers"
    if _BLOCKS.search(question):
        return None
    if _NEXT.search(question):
        return "next"
    if _PROGRESS.search(question):
        return "progress"
    return None


def answer_links(question: str, subject: str, links: list[Link], state: str | None = None) -> str:
    """A direction- and state-aware answer about one entity's links (see the module docstring)."""
    dependencies = [x for x in links if x.relation in DEPENDENCY_RELATIONS]
    asked = focus_question(question)
    if asked == "blockers":
        return answer_blockers(subject, links)
    if asked == "next":
        return answer_next(subject, links)
    if asked == "progress":
        return answer_progress(subject, links, state)
    if _BLOCKS.search(question):
        waiting = [x for x in dependencies if x.direction == "incoming"]
        if not waiting:
            return f"Nothing waits for {subject}: no other entity depends on it."
        return (
            f"{len(waiting)} {'entity waits' if len(waiting) == 1 else 'entities wait'} for {subject} "
            f"(they depend on it):\n\n{_listing(waiting, with_relation=False)}"
        )
    kind_asked = _ASKED_KIND.search(question)
    if kind_asked:
        word = kind_asked.group(1).lower().rstrip("s")
        kind = {"doc": "document"}.get(word, word)
        chosen = [x for x in links if x.kind == kind]
        if not chosen:
            return f"{subject[0].upper()}{subject[1:]} has no linked {kind}s."
        return f"{subject[0].upper()}{subject[1:]} is linked to these {kind}s:\n\n" + _listing(
            chosen, with_relation=True
        )
    if not links:
        return f"{subject[0].upper()}{subject[1:]} has no linked entities."
    return f"{subject[0].upper()}{subject[1:]} has {len(links)} links:\n\n" + _listing(
        links, with_relation=True
    )


def packet_codes(packet: str) -> list[tuple[str, str]]:
    """`(code, name)` of every entry listed in a Context Packet, in its order."""
    return [
        (m.group(1), m.group(2)) for line in packet.splitlines() if (m := _PACKET_LINE.match(line.strip()))
    ]


def best_code(question: str, packet: str) -> str | None:
    """The packet entry whose name shares the most words with the question (packet order breaks ties);
    None when the packet is not confident or no name shares a word."""
    if not re.search(r"\*\*Confidence:\*\* (High|Medium)", packet):
        return None
    wanted = {stem(w) for w in search_terms(question)}
    scored = [
        (len(wanted & {stem(w) for w in search_terms(name)}), -i, code)
        for i, (code, name) in enumerate(packet_codes(packet))
    ]
    best = max(scored, default=(0, 0, None))
    return best[2] if best[0] else None


def answer_entry(entry: str, packet: str | None) -> str:
    """A KB entry's description quoted, with its code paths, related entries and the other matches."""
    lines = entry.splitlines()
    title = lines[0].removeprefix("## ").strip() if lines else "the entry"
    fields = {
        key: value
        for line in lines
        if (m := re.match(r"^- \*\*(Collection|Description|Code paths):\*\* (.*)$", line))
        for key, value in [m.groups()]
    }
    related = [line.strip() for line in lines if re.match(r"^- \*\*[A-Z]{1,6}-\d+:\*\*", line)]
    collection, description = fields.get("Collection", "knowledge base"), fields.get("Description", "(none)")
    text = f"**{title}** ({collection}):\n\n> {description}"
    if fields.get("Code paths") and fields["Code paths"] != "(none yet)":
        text += f"\n\nImplemented in: {fields['Code paths']}."
    if related:
        text += "\n\nRelated entries:\n" + "\n".join(related[:4])
    code = title.split(":", 1)[0]
    others = [f"{c} {n}" for c, n in packet_codes(packet or "") if c != code][:4]
    if others:
        text += "\n\nAlso in the knowledge base on this: " + "; ".join(others) + "."
    return text


def candidates(question: str, packet: str, limit: int = 4) -> list[str]:
    """Packet entries whose names share a word with a vague question, as `CODE name` lines."""
    wanted = {stem(w) for w in search_terms(question)}
    return [
        f"- **{code}:** {name}"
        for code, name in packet_codes(packet)
        if wanted & {stem(w) for w in search_terms(name)}
    ][:limit]
