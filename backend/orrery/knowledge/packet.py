"""The Context Packet: load_context_for_task's result as the markdown the assistant reads."""

from __future__ import annotations

from orrery.knowledge.load_context import ContextLoad
from orrery.text import inline_data

NO_CONTEXT = "No KB context found for this task. The knowledge base may not cover this area yet."
MAX_CODE_PATHS = 3
MAX_CUT_NAMED = 5
"""Entries cut by `max_results` named in the packet (the rest are counted)."""
GET_ENTRY_HINT = "_Use `get_entry` for full details on any entry._"


def format_context_packet(load: ContextLoad) -> str:
    """`## Context Loaded`, confidence, match counts, a section per collection (in collection
    priority order, as the seed's example), and the hint."""
    if load.confidence == "none" or not load.entries:
        return NO_CONTEXT
    collections: dict[str, list[str]] = {}
    for e in sorted(load.entries, key=lambda e: e.collection_priority):  # stable: rank within a group
        collections.setdefault(e.collection_name, []).append(
            f"- **{e.code}:** {inline_data(e.name)}{_code_paths(e.code_paths)}"
        )
    lines = [
        "## Context Loaded",
        f"**Confidence:** {load.confidence.capitalize()}",
        f"**Matched:** {len(load.entries)} entries across {len(collections)} collections",
    ]
    for name, items in collections.items():
        lines += ["", f"### {inline_data(name)} ({len(items)})", *items]
    if load.excluded:
        cut = ", ".join(f"{x.code} {inline_data(x.name)}" for x in load.excluded[:MAX_CUT_NAMED])
        more = len(load.excluded) - MAX_CUT_NAMED
        lines += [
            "",
            f"_Not shown ({load.excluded[0].reason}): {cut}{f' and {more} more' if more > 0 else ''}._",
        ]
    lines += ["", GET_ENTRY_HINT]
    return "\n".join(lines)


def _code_paths(paths: list[str]) -> str:
    """` (code: a.py, b.py and 2 more)`: where the concept is implemented, as data."""
    if not paths:
        return ""
    shown = ", ".join(inline_data(p) for p in paths[:MAX_CODE_PATHS])
    more = len(paths) - MAX_CODE_PATHS
    return f" (code: {shown}{f' and {more} more' if more > 0 else ''})"
