"""The receipt table: sections, tokens, budget, included and excluded items with reasons.

`orrery context show` and the terminal chat's `/context` print the same table.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

SHOWN_REASONS = 4


def receipt_table(receipt: Any) -> Table:
    """A rich table of a `ContextReceipt`."""
    source = f" ({receipt.strategy_source})" if getattr(receipt, "strategy_source", "") else ""
    table = Table(
        title=f"receipt · {receipt.total_tokens} tokens · budgets x{receipt.budget_scale:g}",
        caption=f"{receipt.agent} · strategy {receipt.strategy}{source}" + _knowledge(receipt.knowledge),
    )
    for column in ("section", "tokens", "budget", "included", "excluded (why)"):
        table.add_column(column, justify="right" if column in ("tokens", "budget") else "left")
    for s in receipt.sections:
        why = "; ".join(f"{i.key}: {i.reason}" for i in s.excluded[:SHOWN_REASONS])
        more = f" (+{len(s.excluded) - SHOWN_REASONS} more)" if len(s.excluded) > SHOWN_REASONS else ""
        table.add_row(s.name, str(s.tokens), str(s.budget), _included(s), why + more)
    return table


def _included(section: Any) -> str:
    """How many items went in; for excerpts from earlier chats, which (chat, date, seq, tokens,
    score and why), as a person checks what was recalled."""
    if section.name != "earlier_chats" or not section.included:
        return str(len(section.included))
    lines = [
        escape(f'"{i.chat_title}" {i.date} seq {i.key.rsplit(" seq ", 1)[-1]} ')
        + escape(f"({i.tokens} tokens, score {i.score:.2f}): {i.reason}")
        for i in section.included
    ]
    return "\n".join([str(len(lines)), *lines])


def _knowledge(knowledge: dict[str, Any] | None) -> str:
    if not knowledge:
        return ""
    confidence = f", {knowledge['confidence']} confidence" if knowledge.get("confidence") else ""
    return f" · knowledge {knowledge['status']}{confidence}"
