"""How fast `orrery mcp` (stdio) answers a real MCP client: time to `initialize`, to `tools/list` and
to the first tool call, from process start (median of N runs; printed, never asserted).

`python -m bench.mcp_startup [--runs 5]`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


async def _one(orrery: str, env: dict[str, str]) -> tuple[float, float, float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=orrery, args=["mcp"], env=env)
    started = time.perf_counter()
    async with stdio_client(params) as streams, ClientSession(*streams) as client:
        await client.initialize()
        ready = time.perf_counter() - started
        await client.list_tools()
        listed = time.perf_counter() - started
        await client.call_tool("search_knowledge", {"query": "billing"})
        called = time.perf_counter() - started
    return ready, listed, called


def main(argv: list[str] | None = None) -> None:
    """Run the stdio server `--runs` times against a fresh demo database and print the medians."""
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--orrery", default=str(Path(sys.executable).with_name("orrery")), help="the command")
    args = parser.parse_args(argv)
    orrery = args.orrery
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/bench.db",
            "ORRERY_SECRET_KEY": "bench",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        subprocess.run([orrery, "db", "upgrade"], env=env, check=True, capture_output=True)
        loaded = subprocess.run(
            [orrery, "demo", "load", "--json"], env=env, check=True, capture_output=True, text=True
        )
        import json

        env["ORRERY_API_KEY"] = json.loads(loaded.stdout.strip().splitlines()[-1])["api_key"]
        runs = [asyncio.run(_one(orrery, env)) for _ in range(args.runs)]
    print("| step (from process start) | median s | min s |")
    print("|---|---:|---:|")
    for label, index in (("initialize", 0), ("tools/list", 1), ("first tools/call", 2)):
        values = [r[index] for r in runs]
        print(f"| {label} | {statistics.median(values):.2f} | {min(values):.2f} |")


if __name__ == "__main__":
    main()
