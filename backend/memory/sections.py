"""A section a caller adds to the system prompt (focus entity, linked entities, knowledge packet)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ContextSection:
    """Items are `(receipt key, markdown)` pairs, kept or dropped whole, in order."""

    name: str
    """The budget it draws on: `focus` or `related`."""
    title: str
    items: Sequence[tuple[str, str]]
    separator: str = "\n"
    """What goes between items (and after the `## title` line)."""
