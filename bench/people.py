"""Many people at once: turns/s when 100 people with 12 chats each talk to 2 workers, against 10
people's (issue 53: within 10%), with the memory the history cache may take printed beside it.

Per count of people, on a fresh PostgreSQL database: each person gets a project, an API key and
`--chats` chats of `--history` earlier messages (written in bulk with the columns the message path
stores, local embeddings included). `--workers` single-worker `orrery serve` processes on that
database answer `--concurrency` clients, each turn going to the next process: a balancer without
affinity, so every process sees every chat. (One `--workers N` server's processes share a
listening socket and the first to wake takes every pending connection: 16 kept-alive connections
split anywhere from 16/0 to 8/8 between two workers, which moved turns/s by half from one start
to the next.) The clients take the chats in turn, round after round, so every chat is active: one
unmeasured round to warm up, then `--turns` turns in all, the same number for every count of
people (100 people's chats each get a tenth of the turns 10 people's get).

Printed per run: turns/s, p50/p95 latency, CPU per turn of the servers and of PostgreSQL, the
history cache's budget (`ORRERY_HISTORY_CACHE_MB` x processes), what it held at the end, its hit
rate and evictions in the window (`/metrics`), and the servers' RSS.

Run `python -m bench.people [--people 10,100] [--chats 12] [--history 40] [--turns 1200]
[--concurrency 16] [--workers 2] [--cache-mb 128]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench import procs
from bench.chats import TOPICS, write_chat
from bench.common import bench_settings
from bench.door import database_cpu_seconds, server_pids
from orrery.db.engine import Database
from orrery.memory.message_index import index_columns
from orrery.repo import chat
from orrery.repo.identity import create_project, create_user, issue_api_key
from tests.support.load import prepare_database, server_process
from tests.support.postgres import ThrowawayPostgres

SECRET = "bench-secret"
QUESTIONS = [f"What did we settle about the {topic} last time?" for topic in TOPICS]


@dataclass
class Window:
    """What one measured window saw."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    server_cpu: float = 0.0
    database_cpu: float = 0.0
    cache: dict[str, float] = field(default_factory=dict)


def _contents(n: int) -> list[str]:
    return [f"About the {TOPICS[i % 10]} and the {TOPICS[(i * 3 + 1) % 10]}: note {i % 7}." for i in range(n)]


def _columns(contents: list[str], known: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The columns the message path stores (counts, search terms, local embeddings), computed once
    per distinct text."""
    missing = [c for c in dict.fromkeys(contents) if c not in known]
    known.update(zip(missing, index_columns(missing), strict=True))
    return [known[c] for c in contents]


async def seed(url: str, people: int, chats: int, history: int) -> list[tuple[str, str]]:
    """`people` people with `chats` chats of `history` messages each: (API key, chat id) per chat."""
    db = Database.from_settings(bench_settings(url))
    out: list[tuple[str, str]] = []
    columns: dict[str, dict[str, Any]] = {}
    try:
        for p in range(people):
            async with db.transaction() as s:
                user = await create_user(s, f"person{p}-{uuid.uuid4().hex[:6]}@example.org", f"Person {p}")
                project = await create_project(s, user.id, f"Project {p}")
                _, key = await issue_api_key(s, user.id, "bench", SECRET)
                for _ in range(chats):
                    c = await chat.create_session(s, user.id, project_id=project.id)
                    contents = _contents(history)
                    await write_chat(s, c.id, contents, _columns(contents, columns))
                    out.append((key, str(c.id)))
    finally:
        await db.dispose()
    return out


async def _cache(http: aiohttp.ClientSession, bases: list[str]) -> dict[str, float]:
    """The history cache's counters and held bytes from each server's `/metrics`, added up."""
    out: dict[str, float] = {}
    for base in bases:
        async with http.get(f"{base}/metrics") as resp:
            text = await resp.text()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "orrery_history_cache_total":
                    out[sample.labels["event"]] = out.get(sample.labels["event"], 0.0) + sample.value
                elif sample.name == "orrery_history_cache_bytes":
                    out["bytes"] = out.get("bytes", 0.0) + sample.value
    return out


async def _turns(
    http: aiohttp.ClientSession, bases: list[str], plan: list[tuple[str, str]], clients: int, window: Window
) -> None:
    """Send the planned turns with `clients` at a time, in order, each to the next server in turn
    (a balancer without affinity: every server sees every chat)."""
    todo = iter(enumerate(plan))

    async def client() -> None:
        for i, (key, sid) in todo:
            started = time.perf_counter()
            headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
            body = {"content": QUESTIONS[i % len(QUESTIONS)]}
            url = f"{bases[i % len(bases)]}/v1/sessions/{sid}/messages"
            async with http.post(url, json=body, headers=headers) as resp:
                await resp.read()
                if resp.status != 200:
                    window.errors.append(f"HTTP {resp.status}")
            window.latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(client() for _ in range(clients)))


async def measure(
    bases: list[str], url: str, chats: list[tuple[str, str]], turns: int, clients: int
) -> Window:
    """One warm-up round over every chat, then `turns` measured turns taking the chats in turn."""
    window = Window()
    timeout = aiohttp.ClientTimeout(total=600)
    connector = aiohttp.TCPConnector(limit=1000)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        await _turns(http, bases, chats, clients, Window())
        before = await _cache(http, bases)
        pids = [pid for base in bases for pid in server_pids(int(base.rsplit(":", 1)[1]))]
        cpu, db_cpu, started = procs.cpu_seconds(pids), database_cpu_seconds(url), time.perf_counter()
        plan = list(itertools.islice(itertools.cycle(chats), turns))
        await _turns(http, bases, plan, clients, window)
        window.elapsed = time.perf_counter() - started
        window.server_cpu = procs.cpu_seconds(pids) - cpu
        window.database_cpu = database_cpu_seconds(url) - db_cpu
        after = await _cache(http, bases)
        window.cache = {k: v - before.get(k, 0.0) for k, v in after.items() if k != "bytes"}
        window.cache["bytes"] = after.get("bytes", 0.0)
        window.cache["rss_mb"] = procs.memory_mb(pids)[0]
    return window


def run(people: int, args: argparse.Namespace) -> str:
    """One count of people on a fresh database and servers: its table row."""
    pg = ThrowawayPostgres().start()
    try:
        asyncio.run(pg.execute(f"CREATE DATABASE people_{people}"))
        url = pg.url(f"people_{people}")
        prepare_database(url, SECRET)
        chats = asyncio.run(seed(url, people, args.chats, args.history))
        env = {"ORRERY_HISTORY_CACHE_MB": str(args.cache_mb)}
        with ExitStack() as stack:
            bases = [stack.enter_context(server_process(url, SECRET, env=env)) for _ in range(args.workers)]
            w = asyncio.run(measure(bases, url, chats, args.turns, args.concurrency))
    finally:
        pg.stop()
    n = len(w.latencies)
    q = statistics.quantiles(w.latencies, n=100) if n > 1 else [0.0] * 99
    lookups = w.cache.get("hit", 0.0) + w.cache.get("miss", 0.0)
    return (
        f"| {people} | {people * args.chats:,} | {n / w.elapsed:.1f} "
        f"| {q[49] * 1000:.0f} / {q[94] * 1000:.0f} "
        f"| {w.server_cpu / n * 1000:.1f} | {w.database_cpu / n * 1000:.1f} "
        f"| {args.cache_mb * args.workers} MB | {w.cache.get('bytes', 0) / 2**20:.1f} MB "
        f"| {w.cache.get('hit', 0) / (lookups or 1):.0%} | {w.cache.get('eviction', 0):.0f} "
        f"| {w.cache['rss_mb']:.0f} MB | {len(w.errors)} |"
    )


def main(argv: list[str] | None = None) -> None:
    """Run each count of people and print one markdown table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--people", default="10,100")
    parser.add_argument("--chats", type=int, default=12)
    parser.add_argument("--history", type=int, default=40)
    parser.add_argument("--turns", type=int, default=1200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache-mb", type=int, default=128)
    args = parser.parse_args(argv)
    print(
        "| people | chats | turns/s | p50 / p95 ms | server CPU ms/turn | database CPU ms/turn "
        "| cache budget | cache held | cache hits | evictions | server RSS | errors |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        flush=True,
    )
    for people in (int(p) for p in args.people.split(",")):
        print(run(people, args), flush=True)


if __name__ == "__main__":
    main()
