"""Context-quality benchmark: the scoping bake-off on the shipped dataset, and relevance's cost on a
2,000-message session next to the plain lexical baseline.

Part 1 runs `orrery eval scoping` (all strategies + `lexical_baseline`, budgets 1000/2000/4000) on
`bench/data/scoping_dataset.json` and prints the Markdown table docs/evaluation.md shows. Part 2 writes one
~2,000-message session (the first conversation, repeated) and reports the median CPU ms per
selection of `relevance` (turns after the first, which read only new messages; and first turns in
a process, which read the window whole) and `lexical_baseline` at a 2,000-token budget.

Run `python -m bench.scoping [--dialects sqlite,postgresql]` (part of `make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from bench.common import bench_settings, databases
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.evaluation.baseline import LexicalBaseline
from orrery.evaluation.dataset import Conversation, Session, Turn
from orrery.evaluation.files import load_dataset
from orrery.evaluation.harness import (
    DEFAULT_STRATEGIES,
    evaluate,
    load_conversation,
    resolve_strategies,
    timed_select,
)
from orrery.evaluation.report import markdown_table
from orrery.memory.history_cache import history_cache
from orrery.memory.scoping import get_strategy
from orrery.tokens import counter_for

DATASET = Path(__file__).parent / "data" / "scoping_dataset.json"


async def _bake_off(settings: Settings, budgets: list[int]) -> str:
    db = Database.from_settings(settings)
    try:
        rows = await evaluate(
            db, load_dataset(DATASET), settings, resolve_strategies(list(DEFAULT_STRATEGIES)), budgets
        )
    finally:
        await db.dispose()
    return markdown_table([r.as_dict() for r in rows])


async def _long_session(settings: Settings, repeats: int = 3) -> dict[str, float]:
    dataset = load_dataset(DATASET)
    first = dataset.conversations[0]
    sessions = [
        Session(
            id=k + 1,
            date=s.date,
            turns=[Turn(id=f"D{k + 1}:{i}", role=t.role, text=t.text) for i, t in enumerate(s.turns)],
        )
        for k, s in enumerate(first.sessions * repeats)
    ]
    db = Database.from_settings(settings)
    try:
        loaded = await load_conversation(db, Conversation(id="long", sessions=sessions, qa=[]))
        counter = counter_for(settings.model)
        out: dict[str, float] = {"messages": loaded.latest_seq}
        # (name, strategy, cold, ask): a warm turn's question is only passed, not stored and rolled
        # back, which would leave its window a newest message the next read no longer finds (and so
        # read the window whole, as a first turn does)
        for name, strategy, cold, ask in (
            ("relevance", get_strategy("relevance"), False, False),
            ("relevance_cold", get_strategy("relevance"), True, True),
            ("lexical_baseline", LexicalBaseline(), False, True),
        ):
            await timed_select(db, strategy, loaded, first.qa[0].question, 2000, counter, settings, ask=ask)
            cpu = []
            for _ in range(3):
                for q in first.qa:
                    if cold:  # the first turn on this session in this process: the window is read whole
                        history_cache.clear()
                    taken = await timed_select(
                        db, strategy, loaded, q.question, 2000, counter, settings, ask=ask
                    )
                    cpu.append(taken[2])
            out[name] = statistics.median(cpu) * 1000
        return out
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Print the bake-off table and the long-session cost per dialect."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite")
    parser.add_argument("--budgets", default="1000,2000,4000")
    args = parser.parse_args(argv)
    dialects = [d.strip() for d in args.dialects.split(",") if d.strip()]
    budgets = [int(b) for b in args.budgets.split(",")]
    with databases(dialects) as fresh:
        for dialect in dialects:
            print(f"### {dialect}: scoping bake-off on {DATASET.name}\n")
            print(asyncio.run(_bake_off(bench_settings(fresh(dialect, "scoping_eval")), budgets)), flush=True)
            long = asyncio.run(_long_session(bench_settings(fresh(dialect, "scoping_long"))))
            ratio = long["relevance"] / long["lexical_baseline"] if long["lexical_baseline"] else 0.0
            print(
                f"\n{dialect}: {long['messages']:.0f}-message session, 2,000-token budget, "
                f"median CPU per selection: relevance {long['relevance']:.1f} ms "
                f"(first turn in a process, window read whole: {long['relevance_cold']:.1f} ms), "
                f"lexical_baseline {long['lexical_baseline']:.1f} ms (ratio {ratio:.2f})\n",
                flush=True,
            )


if __name__ == "__main__":
    main()
