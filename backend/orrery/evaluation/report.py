"""Running the evaluation in a throwaway database, and printing its table."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

from orrery.config import Settings
from orrery.evaluation.dataset import CATEGORIES
from orrery.evaluation.files import load_dataset
from orrery.evaluation.harness import evaluate, resolve_strategies

SHORT = {
    "single_hop": "single",
    "multi_hop": "multi",
    "temporal": "date",
    "open_domain": "open",
    "knowledge_update": "update",
    "instruction": "instr.",
    "preference": "pref.",
    "contradiction": "clash",
    "event_order": "order",
    "summary": "summary",
    "multi_session": "across",
    "adversarial": "never",
}


def parse_budgets(text: str) -> list[int]:
    """`1000,2000` -> [1000, 2000]; anything else is a `ValueError` with a clear message."""
    try:
        budgets = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated whole numbers, got {text!r}") from None
    if not budgets or any(b < 0 for b in budgets):
        raise ValueError(f"--budgets must be comma-separated numbers >= 0, got {text!r}")
    return budgets


def run_scoping(
    path: Path,
    strategies: list[str],
    budgets: list[int],
    settings: Settings,
    database_url: str | None = None,
    fmt: str = "auto",
) -> list[dict[str, Any]]:
    """Evaluate on `database_url`, or on a fresh SQLite file that is deleted afterwards."""
    dataset = load_dataset(path, fmt)
    chosen = resolve_strategies(strategies)
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"
        from orrery.db.migrations import upgrade

        upgrade(url)
        return asyncio.run(
            _evaluate(settings.model_copy(update={"database_url": url}), dataset, chosen, budgets)
        )


async def _evaluate(
    settings: Settings, dataset: Any, chosen: Any, budgets: list[int]
) -> list[dict[str, Any]]:
    from orrery.db.engine import Database

    db = Database.from_settings(settings)
    try:
        return [row.as_dict() for row in await evaluate(db, dataset, settings, chosen, budgets)]
    finally:
        await db.dispose()


def categories_of(results: list[dict[str, Any]]) -> list[str]:
    """The categories the results have, known ones in report order, then any others."""
    seen = {c for r in results for c in r["by_category"]}
    return [c for c in CATEGORIES if c in seen] + sorted(seen - set(CATEGORIES))


def results_table(results: list[dict[str, Any]]) -> Table:
    """One line per strategy x budget; `recall` is over answerable questions, `unans.` the
    adversarial ones (no answer in the conversation) apart."""
    cats = categories_of(results)
    table = Table(title="Scoping evaluation: evidence recall by strategy and conversation budget")
    for header in (
        "strategy",
        "budget",
        "recall",
        "unans.",
        "all ev.",
        *(SHORT.get(c, c) for c in cats),
        "facts kept",
        "tokens mean/max",
        "ms p50/p95",
        "CPU ms p50",
    ):
        table.add_column(header, justify="left" if header == "strategy" else "right")
    for r in results:
        table.add_row(
            r["strategy"],
            str(r["budget"]),
            f"{r['recall']:.1%}",
            f"{r['recall_unanswerable']:.1%}",
            f"{r['all_evidence']:.1%}",
            *(f"{r['by_category'].get(c, 0.0):.0%}" for c in cats),
            f"{r['facts_kept']:.1%}",
            f"{r['tokens_mean']:.0f}/{r['tokens_max']}",
            f"{r['ms_median']:.1f}/{r['ms_p95']:.1f}",
            f"{r['cpu_ms_median']:.1f}",
        )
    return table


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The same table as Markdown (for docs/evaluation.md and the benchmark)."""
    cats = categories_of(results)
    head = [
        "strategy",
        "budget",
        "recall",
        "unanswerable",
        "all evidence",
        *(SHORT.get(c, c) for c in cats),
        "facts kept",
        "tokens mean/max",
        "ms p50/p95",
        "CPU ms p50",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [
            r["strategy"],
            str(r["budget"]),
            f"{r['recall']:.1%}",
            f"{r['recall_unanswerable']:.1%}",
            f"{r['all_evidence']:.1%}",
            *(f"{r['by_category'].get(c, 0.0):.0%}" for c in cats),
            f"{r['facts_kept']:.1%}",
            f"{r['tokens_mean']:.0f}/{r['tokens_max']}",
            f"{r['ms_median']:.1f}/{r['ms_p95']:.1f}",
            f"{r['cpu_ms_median']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
