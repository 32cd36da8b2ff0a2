"""A section a caller adds to the system prompt (focus entity, linked entities, knowledge packet),
the receipt line that says what went in or out, and the one rule for what a section's frame costs,
shared by every fitter. Base layer: every domain renders sections, so none owns them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from orrery.tokens import TokenCounter

SECTION_JOINT = "\n\n"
"""What goes between sections of the system prompt."""


class ScopedMessage(TypedDict):
    """What the model receives: role and content, nothing else."""

    role: str
    content: str


@dataclass(frozen=True)
class ReceiptItem:
    """One line of a receipt: what was considered, its cost, and why it is in or out."""

    kind: str
    key: str
    tokens: int | None
    reason: str
    score: float | None = None


@dataclass(frozen=True)
class ContextSection:
    """Items are `(receipt key, markdown)` pairs, kept or dropped whole, in order."""

    name: str
    """The budget it draws on: `focus`, `knowledge` or `related`."""
    title: str
    items: Sequence[tuple[str, str]]
    separator: str = "\n"
    """What goes between items (and after the `## title` line)."""
    tokens: Sequence[int] | None = None
    """Each item's token count when the caller already counted it (nothing is counted twice)."""
    budget: int | None = None
    """A cap below the named budget (linked entities: at most ~500 tokens whatever the window)."""
    excluded: Sequence[ReceiptItem] = ()
    """What the producer already left out (with its reasons), listed in the receipt as excluded."""


def frame_tokens(title: str, separator: str, counter: TokenCounter) -> int:
    """Tokens a section costs before its first item: the `## title` line, its separator and the
    joint to the section before. Both the linked-entity fitter and the prompt assembly use this, so
    a section fitted by its producer is never cut again."""
    return counter.count(f"## {title}{separator}") + counter.count(SECTION_JOINT)


def items_cost(tokens: Sequence[int], separator_tokens: int) -> int:
    """What whole items cost together, separators between them included."""
    return sum(tokens) + separator_tokens * max(0, len(tokens) - 1)
