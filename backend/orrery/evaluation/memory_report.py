"""Running `orrery eval memory` in a throwaway database, and its table beside the within-chat one."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

from orrery.config import Settings
from orrery.evaluation.files import load_dataset
from orrery.evaluation.report import SHORT, categories_of


def run_memory(
    path: Path,
    caps: list[int],
    settings: Settings,
    database_url: str | None = None,
    fmt: str = "auto",
    within: bool = True,
) -> dict[str, list[dict[str, Any]]]:
    """New-chat recall at each cap, and (`within`) the default strategy within the chat at the same
    budgets, on `database_url` or a fresh SQLite file deleted afterwards."""
    dataset = load_dataset(path, fmt)
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"
        from orrery.db.migrations import upgrade

        upgrade(url)
        return asyncio.run(_run(settings.model_copy(update={"database_url": url}), dataset, caps, within))


async def _run(
    settings: Settings, dataset: Any, caps: list[int], within: bool
) -> dict[str, list[dict[str, Any]]]:
    from orrery.db.engine import Database
    from orrery.evaluation.harness import evaluate
    from orrery.evaluation.memory import evaluate_memory
    from orrery.memory.scoping import get_strategy

    db = Database.from_settings(settings)
    try:
        recalled, control = await evaluate_memory(db, dataset, settings, caps)
        inside: list[dict[str, Any]] = []
        if within:
            rows = await evaluate(db, dataset, settings, [get_strategy("relevance")], caps)
            inside = [row.as_dict() for row in rows]
        return {
            "new_chat": [row.as_dict() for row in recalled],
            "bm25_control": [row.as_dict() for row in control],
            "within_chat": inside,
        }
    finally:
        await db.dispose()


def memory_table(results: dict[str, list[dict[str, Any]]]) -> Table:
    """One line per cap for a new chat (recall from earlier chats), the plain BM25 control in the
    same budget, then the within-chat default at the same budgets: evidence recall anywhere in what
    the model sees, by category, questions with only the older of two values ("older alone"),
    tokens and CPU."""
    rows: list[tuple[str, Any, dict[str, Any], str, dict[str, Any] | None]] = [
        ("new chat", r["cap"], r, f"{r['tokens_mean']:.0f}/{r['tokens_max']}", r) for r in results["new_chat"]
    ]
    rows += [
        ("bm25 control", r["cap"], r, f"{r['tokens_mean']:.0f}/{r['tokens_max']}", r)
        for r in results.get("bm25_control", [])
    ]
    rows += [
        ("within chat", r["budget"], r, f"{r['tokens_mean']:.0f}/{r['tokens_max']}", None)
        for r in results["within_chat"]
    ]
    cats = categories_of([r for _, _, r, _, _ in rows])
    table = Table(
        title="Memory evaluation: evidence recall in a new chat, the plain BM25 control, and within the chat"
    )
    for header in (
        "where",
        "cap",
        "recall",
        "unans.",
        "all ev.",
        *(SHORT.get(c, c) for c in cats),
        "older alone",
        "tokens mean/max",
        "CPU ms p50 (recall)",
    ):
        table.add_column(header, justify="left" if header == "where" else "right")
    for where, cap, r, tokens, memory in rows:
        cpu = f"{r['cpu_ms_median']:.1f}" + (f" ({memory['recall_cpu_ms_median']:.1f})" if memory else "")
        table.add_row(
            where,
            str(cap),
            f"{r['recall']:.1%}",
            f"{r['recall_unanswerable']:.1%}",
            f"{r['all_evidence']:.1%}",
            *(f"{r['by_category'].get(c, 0.0):.1%}" for c in cats),
            str(r["older_alone"]) if memory else "-",
            tokens,
            cpu,
        )
    return table
