"""`find_entities`' text: one item per entity, in the shape of `get_linked_entities`' items
(`#### name [id]` and `- **Field:** value` lines), names quoted as data (`inline_data`)."""

from __future__ import annotations

from orrery.graph.find import Found
from orrery.text import inline_data


def format_found(query: str, found: list[Found]) -> str:
    """The found entities, or a line saying none matched."""
    what = f"matching {inline_data(query)!r}" if query.strip() else "open tasks, ready first"
    if not found:
        return f"## Entities {what}\n\nNo entity of this project matches."
    lines = [f"## Entities {what} ({len(found)})"]
    for f in found:
        lines += ["", f"#### {inline_data(f.name)} [{f.id}]", ""]
        lines.append(f"- **Kind:** {f.kind}")
        lines.append(f"- **State:** {inline_data(f.state)}")
        lines.append(f"- **Due:** {f.due_at.date().isoformat() if f.due_at else 'no due date'}")
        if f.plans:
            lines.append(f"- **Plans:** {', '.join(inline_data(p) for p in f.plans)}")
        lines.append(f"- **Waits on:** {f.open_dependencies} unfinished")
        lines.append(f"- **Waited on by:** {f.open_dependents} open")
    return "\n".join(lines)
