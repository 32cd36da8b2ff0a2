"""What a server holds: `python -m bench.memory [--provider] [--workers W] [--source CHECKOUT]`.

Serves a fresh demo database (SQLite with 1 worker, else a throwaway PostgreSQL) with `orrery serve`,
then reads the RSS and PSS (each page shared by n processes counted 1/n) of the server's process
tree: idle (after `/health` answers and the warm-up is done), and after 6 sessions × 10 turns.
`--owners` instead loads a provider-path worker's parts one by one in a fresh process and prints the
RSS each adds (the order matters: what a part shares with an earlier one is counted there).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from bench import procs
from bench.common import databases
from bench.door import SECRET, _converse, _new_session, server_pids
from bench.provider import model_env
from tests.support.load import ROOT, prepare_database, server_process

SESSIONS, TURNS = 6, 10


def held(port: int) -> tuple[float, float]:
    """(RSS, PSS) of the server's process tree, MB."""
    return procs.memory_mb(server_pids(port))


async def _turns(base: str, demo: dict[str, Any]) -> None:
    headers = {"Authorization": f"Bearer {demo['api_key']}"}
    async with aiohttp.ClientSession(base, headers=headers) as http:
        sids = await asyncio.gather(*(_new_session(http, demo) for _ in range(SESSIONS)))
        done = await asyncio.gather(*(_converse(http, s, TURNS, distinct=True) for s in sids))
    errors = [t.error for session in done for t in session if t.error]
    if errors:
        raise RuntimeError(f"{len(errors)} turns failed, e.g. {errors[0]}")


def serve(args: argparse.Namespace) -> None:
    source = Path(args.source).resolve() if args.source else ROOT
    dialect = "sqlite" if args.workers == 1 else "postgresql"
    with databases([dialect]) as fresh, model_env(args.provider) as env:
        url = fresh(dialect, "memory", migrate=False)
        demo = prepare_database(url, SECRET, source)
        with server_process(url, SECRET, workers=args.workers, env=env, source=source) as base:
            port = int(base.rsplit(":", 1)[1])
            idle = held(port)
            asyncio.run(_turns(base, demo))
            after = held(port)
    path = "provider" if args.provider else "offline"
    print(f"{path}, {args.workers} worker(s), {dialect}, {source}")
    print(f"  idle: RSS {idle[0]:.0f} MB, PSS {idle[1]:.0f} MB")
    print(f"  after {SESSIONS * TURNS} distinct turns: RSS {after[0]:.0f} MB, PSS {after[1]:.0f} MB")


OWNERS = """
import gc, os, sys
def rss():
    gc.collect()
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
steps = [
    ('the app (orrery.app.boot, FastAPI, SQLAlchemy, pydantic-ai)',
     'import orrery.app.boot, orrery.app.http'),
    ('the local embedder (ONNX Runtime, tokenizer, int8 model)',
     'from orrery.memory.embeddings import load_embedder; e = load_embedder(); e.embed_once(["warm"])'),
    ('tiktoken cl100k_base', 'from orrery.tokens import load_encodings; load_encodings(["cl100k_base"])'),
    ('tiktoken o200k_base', 'from orrery.tokens import load_encodings; load_encodings(["o200k_base"])'),
    ('the provider (import and warm-up)',
     'import asyncio; from orrery.config import Settings; from orrery.agents.preload import preload_provider;'
     ' asyncio.run(preload_provider(MODEL, Settings(model=MODEL)))'),
    ('a price (cost of one reply)',
     'import asyncio; from orrery.ops.cost import message_cost; asyncio.run(message_cost(MODEL, 1200, 40))'),
]
last = rss()
print(f'  {"Python and site":62} {last:6.0f} MB')
for name, code in steps:
    exec(code, {'MODEL': MODEL})
    now = rss()
    print(f'  {name:62} {now - last:+6.0f} MB')
    last = now
print(f'  {"total":62} {last:6.0f} MB')
"""


def owners(args: argparse.Namespace) -> None:
    source = Path(args.source).resolve() if args.source else ROOT
    env = {"PYTHONPATH": f"{source / 'backend'}:{source}", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code = f"MODEL = {args.model!r}\n" + OWNERS
    print(f"RSS by owner, loaded in turn in one process ({source}, model {args.model}):", flush=True)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd="/tmp")


def main(argv: list[str] | None = None) -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--provider", action="store_true", help="litellm streaming from the fake provider")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--source", help="the checkout to serve (default: this one)")
    parser.add_argument("--owners", action="store_true", help="RSS by owner, loaded in turn")
    parser.add_argument("--model", default="openai/gpt-4o-mini", help="with --owners")
    args = parser.parse_args(argv)
    owners(args) if args.owners else serve(args)


if __name__ == "__main__":
    main()
