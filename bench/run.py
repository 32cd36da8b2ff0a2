"""`make bench`: every benchmark in turn (`python -m bench.run [NAME...]`; see `runners` below)."""

from __future__ import annotations

import sys

from bench import (
    context,
    graph,
    http_load,
    knowledge,
    load,
    load_workers,
    mcp_startup,
    ops,
    orchestrator,
    scoping,
)


def main() -> None:
    """Run the named benchmarks (default: all)."""
    chosen = sys.argv[1:] or [
        "load",
        "context",
        "graph",
        "knowledge",
        "scoping",
        "orchestrator",
        "http_load",
        "ops",
        "mcp_startup",
        "load_workers",
    ]
    for name in chosen:
        print(f"\n## {name}\n", flush=True)
        runners = {
            "load": load.main,
            "context": context.main,
            "graph": graph.main,
            "knowledge": knowledge.main,
            "scoping": scoping.main,
            "ops": ops.main,
            "mcp_startup": mcp_startup.main,
            "orchestrator": orchestrator.main,
            "http_load": http_load.main,
            "load_workers": load_workers.main,
        }
        runners[name]([])


if __name__ == "__main__":
    main()
