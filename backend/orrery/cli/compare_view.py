"""`orrery context show --compare`: strategies side by side as rich tables.

One row per message unit, grouped kept by all, by some (which) and by none, so the difference
between strategies is what stands out; then each strategy's totals and notes.
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from orrery.cli.common import out
from orrery.context.compare import GROUPS, Comparison, UnitRow, Verdict


def print_comparison(comparison: Comparison) -> None:
    """Print a table per group (kept by some, all, none), the totals and any notes."""
    turn = f"turn at seq {comparison.at}" if comparison.at else "next turn"
    out.rule(f"compare · {comparison.agent} · {turn} (history through seq {comparison.latest_seq})")
    if comparison.query:
        out.print(f"query: {comparison.query[:100]}", markup=False, highlight=False)
    for agreement, label in GROUPS:
        rows = comparison.group(agreement)
        if rows:
            out.print(units_table(f"{label} ({len(rows)})", rows, comparison.strategies))
    out.print(totals_table(comparison))
    notes = [*comparison.notes, *(f"{t.name}: {n}" for t in comparison.totals for n in t.notes)]
    for note in notes:
        out.print(f"note: {note}", markup=False, highlight=False)


def units_table(title: str, rows: list[UnitRow], names: list[str]) -> Table:
    """Units with their tokens and each strategy's verdict and reason (a ✓ says who kept it)."""
    table = Table(title=title, title_justify="left")
    table.add_column("unit", no_wrap=True)
    table.add_column("tokens", justify="right")
    for name in names:
        table.add_column(name, min_width=len(name))
    for row in rows:
        table.add_row(*_cells(row, names))
    return table


def totals_table(comparison: Comparison) -> Table:
    """What each strategy selected, in sum."""
    table = Table(title="totals")
    columns = (
        "strategy",
        "ran as",
        "messages",
        "tokens",
        "budget",
        "units kept",
        "units dropped",
        "earlier chats",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("strategy", "ran as") else "right")
    for t in comparison.totals:
        earlier = f"{len(t.earlier_chats)} units, {t.earlier_chats_tokens}/{t.earlier_chats_budget}"
        table.add_row(
            t.name,
            t.ran_as,
            str(t.messages),
            str(t.tokens),
            str(t.budget),
            str(t.kept),
            str(t.dropped),
            earlier,
        )
    return table


def _cells(row: UnitRow, names: list[str]) -> list[str]:
    """Unit, tokens and each strategy's verdict (a ✓ says who kept it)."""
    unit = row.key if row.kind == "message" else f"{row.kind}: {row.key}"
    tokens = "" if row.tokens is None else str(row.tokens)
    return [escape(unit), tokens, *(_verdict(row.verdicts[n]) for n in names)]


def _verdict(verdict: Verdict) -> str:
    score = f" ({verdict.score:.2f})" if verdict.score is not None else ""
    mark = "[green]✓[/]" if verdict.kept else "[dim]✗[/]"
    return f"{mark} {escape(verdict.reason)}{score}"
