"""How the offline model turns tool results into answers instead of dumps.

- Links (`get_linked_entities`): direction-aware. "What is this task blocked by?" lists only what the
  task depends on (outgoing `depends_on` / `requires`); "What does this task block?" only what waits
  for it (incoming); "What goals does this task support?" only goals; anything else, every link.
- Knowledge (`get_entry`): the entry's own description, quoted, with code paths and related entries.
- A Context Packet: the entry that best matches the question, or a plain "nothing relevant".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend.text import search_terms, stem

DEPENDENCY_RELATIONS = ("depends_on", "requires")
_BLOCKED_BY = re.compile(
    r"\bblocked\s+by\b|\bwhat\s+blocks\b|\bwhat\s+is\s+blocking\b|\bwaiting\s+(?:on|for)\b(?!\s+(?:this|it)\b)"
    r"|\b(?:does|do)\s+(?:this|it)(?:\s+\w+)?\s+depend\s+on\b|\bprerequisites?\b|\bblockers?\b",
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
_PACKET_LINE = re.compile(r"^- \*\*([A-Z]{1,6}-\d+):\*\* (.+?)(?: \(code: .+\))?$")
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
DONE_STATES = ("done", "completed", "complete", "achieved", "closed", "cancelled", "archived")


@dataclass(frozen=True)
class Link:
    """One linked entity as `get_linked_entities` printed it."""

    kind: str
    name: str
    state: str
    relation: str
    direction: str


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
            links.append(Link(kind, name, state, relation, direction.rstrip(")") or "outgoing"))
    return links


def _listing(links: list[Link], *, with_relation: bool) -> str:
    lines = []
    for link in links:
        where = f", {link.relation} ({link.direction})" if with_relation else ""
        lines.append(f"- **{link.name}** ({link.state or 'no state'}{where})")
    return "\n".join(lines)


def _open_count(links: list[Link]) -> str:
    still_open = [x for x in links if x.state.lower() not in DONE_STATES]
    if not still_open:
        return "All of them are finished."
    if len(still_open) == len(links):
        return "None of them is finished yet." if len(links) > 1 else "It is not finished yet."
    return f"{len(still_open)} of them are not finished yet."


def answer_links(question: str, subject: str, links: list[Link]) -> str:
    """A direction-aware answer about one entity's links (see the module docstring)."""
    dependencies = [x for x in links if x.relation in DEPENDENCY_RELATIONS]
    if _BLOCKED_BY.search(question):
        blockers = [x for x in dependencies if x.direction == "outgoing"]
        if not blockers:
            return f"Nothing blocks {subject}: it depends on no other entity."
        return (
            f"{subject[0].upper()}{subject[1:]} is blocked by {len(blockers)} "
            f"{'entity' if len(blockers) == 1 else 'entities'} it depends on:\n\n"
            f"{_listing(blockers, with_relation=False)}\n\n{_open_count(blockers)}"
        )
    if _BLOCKS.search(question):
        waiting = [x for x in dependencies if x.direction == "incoming"]
        if not waiting:
            return f"Nothing waits for {subject}: no other entity depends on it."
        return (
            f"{len(waiting)} {'entity waits' if len(waiting) == 1 else 'entities wait'} for {subject} "
            f"(they depend on it):\n\n{_listing(waiting, with_relation=False)}"
        )
    asked = _ASKED_KIND.search(question)
    if asked:
        word = asked.group(1).lower().rstrip("s")
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
