"""`make bench`: every benchmark in turn (`python -m bench.run [NAME...]`; see `RUNNERS` below)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from bench import (
    context,
    direct,
    door,
    embedding,
    first_turn,
    graph,
    http_load,
    knowledge,
    load,
    load_workers,
    loop,
    mcp_startup,
    model_floor,
    ops,
    orchestrator,
    read_your_writes,
    recall,
    scoping,
    sqlite_driver,
)

RUNNERS: dict[str, Callable[[list[str]], None]] = {
    "load": load.main,
    "context": context.main,
    "graph": graph.main,
    "knowledge": knowledge.main,
    "scoping": scoping.main,
    "orchestrator": orchestrator.main,
    "http_load": http_load.main,
    "ops": ops.main,
    "mcp_startup": mcp_startup.main,
    "load_workers": load_workers.main,
    "first_turn": first_turn.main,
    "read_your_writes": read_your_writes.main,
    "door": door.main,
    "model_floor": model_floor.main,
    "sqlite_driver": sqlite_driver.main,
    "direct": direct.main,
    "embedding": embedding.main,
    "recall": recall.main,
    "loop": loop.main,
}


def main(argv: list[str] | None = None) -> None:
    """Run the named benchmarks (default: all), each with its default arguments."""
    chosen = (sys.argv[1:] if argv is None else argv) or list(RUNNERS)
    unknown = [name for name in chosen if name not in RUNNERS]
    if unknown:
        raise SystemExit(f"unknown benchmark {', '.join(unknown)}; expected one of {', '.join(RUNNERS)}")
    for name in chosen:
        print(f"\n## {name}\n", flush=True)
        RUNNERS[name]([])


if __name__ == "__main__":
    main()
