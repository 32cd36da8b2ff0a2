"""`make bench`: every benchmark in turn (`python -m bench.run [NAME...]`; see `runners` below)."""

from __future__ import annotations

import sys

from bench import context, graph, knowledge, load, mcp_startup, ops, scoping


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
        }
        runners[name]([])


if __name__ == "__main__":
    main()
