"""Orrery against Letta, same run: server and PostgreSQL CPU per streamed turn, same fake provider.

`python -m bench.letta --letta-python PATH [--pg-bin DIR] [--sessions 6] [--turns 10] [--runs 3]
[--pooling on|off]` drives a Letta server from the user's own Letta install (the Python of a venv
holding `letta[postgres]`; none is installed with Orrery, and this file holds none of its code)
and `orrery serve` side by side, both streaming from one fake OpenAI-compatible provider
(`bench/provider.py`: to a request without its `search_knowledge` tool, the 11-delta text reply
and usage). Letta needs PostgreSQL with the pgvector extension: `--pg-bin` (or `ORRERY_PG_BIN`)
names binaries that have it; Orrery's server gets a throwaway PostgreSQL of the usual binaries.

Letta's schema is created from its own ORM models (`Base.metadata.create_all`, plus the sequence
its migrations give `messages.sequence_id`): its migrations do not ship in its wheel. Each system
gets `--sessions` sessions (Letta: agents whose model is the fake provider), one warm-up turn
each, then windows of `--turns` streamed turns per session, Orrery's and Letta's alternating
`--runs` times; per window, the server's CPU (its process tree, /proc) and its PostgreSQL's (server
and backends) per turn, and the wall time of a turn. The medians over the runs are printed, and
Orrery : Letta in server + PostgreSQL CPU. `--pooling on` sets Letta's
`LETTA_DISABLE_SQLALCHEMY_POOLING=false` (its default is no pooling: a connection per session).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import aiohttp

from bench import door, procs
from bench.common import loop_ms
from bench.door_report import Window, cpu_ms
from bench.provider import model_env
from tests.support.load import free_port, prepare_database, server_process
from tests.support.postgres import ThrowawayPostgres

QUESTION = door.QUESTION
SCHEMA = """
import asyncio, sys
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
import letta.orm
from letta.orm import Base

async def main(url):
    engine = create_async_engine(url)
    async with engine.begin() as c:
        await c.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        await c.run_sync(Base.metadata.create_all)
        await c.execute(text("CREATE SEQUENCE IF NOT EXISTS message_seq"))
        await c.execute(text(
            "ALTER TABLE messages ALTER COLUMN sequence_id SET DEFAULT nextval('message_seq')"
        ))
    await engine.dispose()

asyncio.run(main(sys.argv[1]))
"""


@contextmanager
def _binaries(bin_dir: str | None) -> Iterator[None]:
    """`ORRERY_PG_BIN` set to `bin_dir` (if given) while a throwaway PostgreSQL starts or stops."""
    saved = os.environ.get("ORRERY_PG_BIN")
    if bin_dir:
        os.environ["ORRERY_PG_BIN"] = bin_dir
    try:
        yield
    finally:
        os.environ.pop("ORRERY_PG_BIN", None)
        if saved is not None:
            os.environ["ORRERY_PG_BIN"] = saved


@contextmanager
def _pg(bin_dir: str | None) -> Iterator[ThrowawayPostgres]:
    """A throwaway PostgreSQL of `bin_dir`'s binaries (default: the usual ones)."""
    with _binaries(bin_dir):
        pg = ThrowawayPostgres().start()
    try:
        yield pg
    finally:
        with _binaries(bin_dir):
            pg.stop()


@contextmanager
def letta_server(
    python: Path, pg: ThrowawayPostgres, provider: dict[str, str], pooling: bool
) -> Iterator[tuple[str, int]]:
    """Letta's schema on a new database of `pg`, then `letta server` on a free port; its base URL
    and pid."""
    asyncio.run(pg.execute("CREATE DATABASE letta"))
    uri = f"postgresql://{pg.user}@127.0.0.1:{pg.port}/letta?sslmode=disable"
    env = {
        **os.environ,
        "LETTA_PG_URI": uri,
        "OPENAI_API_KEY": provider["OPENAI_API_KEY"],
        "OPENAI_API_BASE": provider["OPENAI_API_BASE"],
        "LETTA_DISABLE_SQLALCHEMY_POOLING": "false" if pooling else "true",
        "PYTHONPATH": "",
    }
    async_uri = uri.replace("postgresql://", "postgresql+asyncpg://").split("?")[0]
    with tempfile.TemporaryDirectory() as home:
        env["HOME"] = home
        subprocess.run([str(python), "-c", SCHEMA, async_uri], env=env, cwd=home, check=True)
        port = free_port()
        letta = python.parent / "letta"
        command = [str(letta), "server", "--host", "127.0.0.1", "--port", str(port)]
        with open(Path(home) / "letta.log", "w") as log:
            proc = subprocess.Popen(command, env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait(proc, base, Path(home) / "letta.log")
            yield base, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def _wait(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    for _ in range(1200):  # a bound on Letta's start-up (~30 s here)
        if proc.poll() is not None:
            raise RuntimeError(f"letta server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            subprocess.run(["curl", "-sf", "-m", "2", f"{base}/v1/health/"], check=True, capture_output=True)
            return
        except subprocess.CalledProcessError:
            time.sleep(0.1)
    raise RuntimeError(f"letta server did not become healthy:\n{log.read_text()[-3000:]}")


async def _agent(http: aiohttp.ClientSession, endpoint: str, i: int) -> str:
    """A Letta agent whose chat model is the fake provider."""
    llm = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "model_endpoint": endpoint}
    embedding = {
        "embedding_endpoint_type": "openai",
        "embedding_endpoint": endpoint,
        "embedding_model": "text-embedding-3-small",
        "embedding_dim": 1536,
    }
    blocks = [{"label": "human", "value": "A person."}, {"label": "persona", "value": "A helpful assistant."}]
    body = {
        "name": f"bench-{i}",
        "llm_config": llm | {"context_window": 128000},
        "embedding_config": embedding,
        "memory_blocks": blocks,
    }
    async with http.post("/v1/agents/", json=body) as resp:
        resp.raise_for_status()
        return str((await resp.json())["id"])


async def _letta_turn(http: aiohttp.ClientSession, agent: str) -> door.Turn:
    started = time.perf_counter()
    turn = door.Turn(latency=0.0)
    body = {"messages": [{"role": "user", "content": QUESTION}], "stream_tokens": True}
    try:
        async with http.post(f"/v1/agents/{agent}/messages/stream", json=body) as resp:
            text = await resp.text()
            if resp.status != 200 or "data: [DONE]" not in text:
                turn.error = f"HTTP {resp.status} {text[:200]}"
            turn.deltas = text.count('"assistant_message"')
    except (aiohttp.ClientError, TimeoutError) as exc:
        turn.error = f"{type(exc).__name__}: {exc}"
    turn.latency = time.perf_counter() - started
    return turn


async def _letta_window(base: str, agents: list[str], turns: int, pids: list[int], pg_port: int) -> Window:
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(base, timeout=timeout) as http:

        async def converse(agent: str) -> list[door.Turn]:
            return [await _letta_turn(http, agent) for _ in range(turns)]

        window = Window()
        cpu, db = procs.cpu_seconds(pids), procs.postgres_cpu_seconds(pg_port)
        started = time.perf_counter()
        done = await asyncio.gather(*(converse(a) for a in agents))
        window.elapsed = time.perf_counter() - started
        window.cpu_seconds = procs.cpu_seconds(pids) - cpu
        window.database_seconds = procs.postgres_cpu_seconds(pg_port) - db
    window.turns = [t for session in done for t in session]
    return window


async def _letta_setup(base: str, endpoint: str, sessions: int) -> list[str]:
    async with aiohttp.ClientSession(base, timeout=aiohttp.ClientTimeout(total=600)) as http:
        agents = [await _agent(http, endpoint, i) for i in range(sessions)]
        await asyncio.gather(*(_letta_turn(http, a) for a in agents))  # the warm-up turn
    return agents


def _summary(name: str, windows: list[Window]) -> tuple[str, float]:
    """A table row of medians over the windows, and the median server + database CPU per turn."""
    server = statistics.median(cpu_ms(w) for w in windows)
    database = statistics.median(w.database_seconds * 1000 / max(len(w.turns), 1) for w in windows)
    wall = statistics.median(statistics.median(t.latency for t in w.turns) * 1000 for w in windows)
    errors = sum(t.error is not None for w in windows for t in w.turns)
    both = statistics.median((cpu_ms(w) + w.database_seconds * 1000 / max(len(w.turns), 1)) for w in windows)
    return f"| {name} | {server:.1f} | {database:.1f} | {both:.1f} | {wall:.0f} | {errors} |", both


def main(argv: list[str] | None = None) -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--letta-python", default=os.environ.get("LETTA_PYTHON"), help="Letta's venv python")
    parser.add_argument("--pg-bin", default=os.environ.get("ORRERY_PG_BIN"), help="PostgreSQL with pgvector")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="windows per system, alternating")
    parser.add_argument("--pooling", default="on", choices=["on", "off"], help="Letta's connection pooling")
    args = parser.parse_args(argv)
    if not args.letta_python:
        parser.error("--letta-python (or LETTA_PYTHON) must name the Python of a Letta install")
    python = Path(args.letta_python)
    with ExitStack() as stack:
        provider = stack.enter_context(model_env(True))
        orrery_pg = stack.enter_context(_pg(None))
        letta_pg = stack.enter_context(_pg(args.pg_bin))
        asyncio.run(orrery_pg.execute("CREATE DATABASE door"))
        url = orrery_pg.url("door")
        demo = prepare_database(url, door.SECRET)
        orrery = stack.enter_context(server_process(url, door.SECRET, env=provider))
        letta, pid = stack.enter_context(letta_server(python, letta_pg, provider, args.pooling == "on"))
        letta_pids = procs.tree(pid, procs.parents())
        agents = asyncio.run(_letta_setup(letta, provider["OPENAI_API_BASE"], args.sessions))
        asyncio.run(door.measure(orrery, url, demo, args.sessions, 1))  # Orrery's warm-up turns
        ours: list[Window] = []
        theirs: list[Window] = []
        for i in range(args.runs):
            ours.append(asyncio.run(door.measure(orrery, url, demo, args.sessions, args.turns)))
            theirs.append(asyncio.run(_letta_window(letta, agents, args.turns, letta_pids, letta_pg.port)))
            line = f"Orrery {cpu_ms(ours[-1]):.1f}, Letta {cpu_ms(theirs[-1]):.1f} ms/turn"
            print(f"run {i + 1}: {line}", flush=True)
    loop = statistics.median(loop_ms())
    ours_row, ours_both = _summary("Orrery (PostgreSQL, 1 worker)", ours)
    theirs_row, theirs_both = _summary(f"Letta (pooling {args.pooling})", theirs)
    print(
        f"\n{args.sessions} sessions x {args.turns} streamed turns, medians of {args.runs} alternating "
        f"windows; load average {Path('/proc/loadavg').read_text()[:14]}, reference loop {loop:.1f} ms\n\n"
        "| system | server CPU ms / turn | PostgreSQL CPU ms / turn | server + PostgreSQL "
        "| wall p50 ms | errors |\n|---|---:|---:|---:|---:|---:|\n"
        f"{ours_row}\n{theirs_row}\n\n"
        f"Orrery : Letta, server + PostgreSQL CPU = 1 : {theirs_both / ours_both:.1f}"
    )


if __name__ == "__main__":
    main()
