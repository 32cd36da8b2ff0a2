"""The table `orrery eval knowledge` prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table

CONFIDENCES = ("high", "medium", "low", "low (asked)", "none", "skipped")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _spread(counts: dict[str, int]) -> str:
    order = [c for c in CONFIDENCES if c in counts] + sorted(set(counts) - set(CONFIDENCES))
    return " ".join(f"{c}:{counts[c]}" for c in order)


def knowledge_table(result: dict[str, Any]) -> Table:
    """One line per KB and one overall: loading precision/recall, hit-rate, named-as-direct, and the
    confidence spread for questions that should and should not load."""
    table = Table(title="Knowledge auto-load evaluation (frozen labelled set)")
    for column in ("KB", "questions", "precision", "recall", "hit-rate", "named direct"):
        table.add_column(column, justify="left" if column == "KB" else "right")
    table.add_column("confidence (should load)")
    table.add_column("confidence (should not)")
    rows = [*result["by_kb"].items(), ("overall", result["overall"])]
    if "held_out" in result:  # written before tuning, never looked at while tuning
        rows.append(("held-out", result["held_out"]["overall"]))
    for name, s in rows:
        table.add_row(
            name,
            str(s["questions"]),
            _pct(s["precision"]),
            _pct(s["recall"]),
            _pct(s["hit_rate"]),
            _pct(s["named_direct"]),
            _spread(s["confidence"]["should_load"]),
            _spread(s["confidence"]["should_not"]),
        )
    if "non_domain" in result:
        nd = result["non_domain"]
        table.caption = (
            f"non-domain: {nd['messages']} messages x {len(result['by_kb'])} KBs: "
            f"{nd['packets']} packets, {nd['notes']} 'not covered' notes (target 0)"
        )
    return table
