"""The door benchmark: what one streamed chat turn costs the server, measured over real HTTP.

Starts `orrery serve` (the offline model, or with `--provider` a fake OpenAI-compatible provider,
`bench/provider.py`, through the normal model settings) on a fresh demo database per configuration —
SQLite, and PostgreSQL with 1 and 2 workers — and runs `--sessions` sessions (focused on the demo task)
x `--turns` streamed turns on `POST /v1/sessions/{id}/messages` (SSE), then a 1-session pass at low
load. Each pass starts with one warm-up turn per session, outside the measured window. Per pass:
- server CPU ms per turn: utime+stime from /proc of the server process and every child (workers),
  before vs after the window — the server's own CPU, not the client's;
- the same, loop-normalised: × 41.5 / the reference loop's ms (`bench.common.reference_loop`, timed
  by this process's CPU, median of 5 runs before and 5 after each server), so figures from a
  slower machine or minute compare with the issue's targets (approximately: a server's work does
  not scale exactly as the loop does);
- beside it, the CPU the benchmark's own HTTP client and PostgreSQL (its server and backends) spent
  in the window: all three share the machine's cores, so they bound turns/s together;
- SQL statements and transactions per turn, counted in the server (`orrery_db_statements_total`,
  `orrery_db_transactions_total` on `/metrics`, summed over workers);
- of the server's CPU, what the local embedding model spent (`orrery_embedding_cpu_seconds_total`):
  the model's work, as the reply is the chat model's, which the offline model leaves out;
- turns/s, p50/p95 latency of the whole turn, p50 time to the first streamed byte and first text delta;
- the reply's shape (text deltas and tool calls per turn, from the SSE events) and errors;
- and per configuration the time from process start to the first 200 on `/health`, which model
  client served (`offline`, `direct`, `proxy` or `litellm`: `bench.provider.served_client`), and the
  server tree's RSS and PSS idle (started, before any turn) and after all its turns.
`--model-client litellm` sets `ORRERY_MODEL_CLIENT=litellm` (every model through litellm);
`auto,litellm` runs both, alternating, in one table.
`--profile DIR` also records the throughput window with py-spy (on PATH) and prints where the CPU
went: shares by owner (the innermost frame of pydantic-ai, SQLAlchemy, the HTTP stack, a
driver or Orrery in each sample) and Orrery's hottest functions.

`--long N` adds a 1-session pass after N turns of its session: a turn's cost must not grow with the
conversation. `--repeat N` runs every configuration N times, each on a new database and server
(the configurations alternate), and reports each pass's window of median CPU, with the range of
CPU and the median and range of turns/s of the throughput pass: one server's windows agree within
a few percent, while servers started minutes apart differ by up to ±20% on this machine, and with
two workers the split of the client's keep-alive connections between them (12/38 to 25/25 seen)
moves turns/s by a quarter.

Run `python -m bench.door [--sessions 50] [--turns 4] [--dialect sqlite|postgresql|all]
[--workers 1,2] [--profile DIR] [--source DIR] [--distinct] [--provider] [--model-client auto,litellm]
[--long N] [--repeat N] [--others N]`. `--others N` loads N other people's messages on the same
topics beside the demo user's (`bench.others`) before the server starts: the database CPU column
must not grow with them. `--source` serves another checkout (e.g. the code before a change; SQL
counts need its `orrery_db_statements_total`, else they read 0).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import statistics
import time
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from bench import procs
from bench.common import databases, loop_ms
from bench.door_report import HEADER, Label, Run, Turn, Window, footer, row, rows_for
from bench.others import load_others
from bench.profiling import py_spy, summarize_profile
from bench.provider import CLIENTS, client_env, model_env, served_client
from tests.support.load import ROOT, STARTED, prepare_database, server_process

SECRET = "bench-door"
FORK_FOR_TESTS = False
"""Test hook (tests/bench/test_door.py sets it): the database's two commands and the server are forked
from the test process's pre-imported launcher (tests/support/entrypoint.py), which saves the test
~4 CPU-s of imports a process; the benchmark always starts cold processes."""
QUESTION = "what should I do next on billing?"


def _read_event(turn: Turn, line: str, event: str, started: float) -> str:
    """Count one SSE line into `turn`; the current event name."""
    if line.startswith("event: "):
        event = line[7:]
        turn.deltas += event == "text"
        turn.tool_calls += event == "tool_call"
        if event == "text" and turn.first_text is None:
            turn.first_text = time.perf_counter() - started
    elif line.startswith("data: ") and event == "error":
        turn.error = f"error event {line[6:200]}"
    return event


async def _turn(http: aiohttp.ClientSession, sid: str, content: str) -> Turn:
    """Send one message and read its SSE stream to the end, timing the first byte and text delta."""
    started = time.perf_counter()
    turn = Turn(latency=0.0)
    event, buffer, done = "", b"", False
    try:
        async with http.post(f"/v1/sessions/{sid}/messages", json={"content": content}) as resp:
            if resp.status != 200:
                turn.error = f"HTTP {resp.status} {(await resp.text())[:200]}"
            else:
                async for chunk in resp.content.iter_any():
                    turn.first_byte = turn.first_byte or time.perf_counter() - started
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for line in lines:
                        event = _read_event(turn, line.decode(), event, started)
                        done = done or event == "done"
    except (aiohttp.ClientError, TimeoutError) as exc:
        turn.error = f"{type(exc).__name__}: {exc}"
    if not done and turn.error is None:
        turn.error = "stream ended without a done event"
    turn.latency = time.perf_counter() - started
    return turn


async def _converse(http: aiohttp.ClientSession, sid: str, turns: int, distinct: bool = False) -> list[Turn]:
    """The same question every turn: the offline reply's shape (`find_entities` and
    `get_linked_entities`, then the text deltas) stays pinned, so runs before and after a change
    compare. A repeated text is embedded once per process, though: `distinct` numbers each question,
    so each new message pays its embedding as a real conversation's does (the reply stays the same)."""
    return [await _turn(http, sid, _question(distinct)) for _ in range(turns)]


def _question(distinct: bool) -> str:
    return f"Note {next(_ASKED)}: {QUESTION}" if distinct else QUESTION


_ASKED = itertools.count(1)


def server_pids(port: int) -> list[int]:
    """The `orrery serve --port PORT` process this process started, and all its descendants (a forked
    server, `FORK_FOR_TESTS`, is the launcher's child: found by the pid `server_process` recorded)."""
    table = procs.parents()
    root = STARTED.get(port) if FORK_FOR_TESTS else None
    for pid, (ppid, args) in table.items():
        serving = b"serve" in args and str(port).encode() in args
        if serving and ppid == os.getpid() and root is None:
            root = pid
    if root is None:
        raise RuntimeError(f"no server process of ours serves port {port}")
    return procs.tree(root, table)


def database_cpu_seconds(url: str) -> float:
    """PostgreSQL's CPU so far (its server and backends, ended ones too); 0 on SQLite, which runs
    inside the server."""
    port = make_url(url).port or 5432
    return procs.postgres_cpu_seconds(port) if url.startswith("postgresql") else 0.0


async def _counters(http: aiohttp.ClientSession) -> tuple[dict[str, float], float, float]:
    """Statements by kind, transactions and the embedding model's CPU seconds so far, from the
    server's `/metrics` (all workers)."""
    async with http.get("/metrics") as resp:
        text = await resp.text()
    statements: dict[str, float] = {}
    transactions = embedding = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "orrery_db_statements_total":
                kind = sample.labels["kind"]
                statements[kind] = statements.get(kind, 0.0) + sample.value
            elif sample.name == "orrery_db_transactions_total":
                transactions += sample.value
            elif sample.name == "orrery_embedding_cpu_seconds_total":
                embedding += sample.value
    return statements, transactions, embedding


async def measure(
    base: str,
    url: str,
    demo: dict[str, Any],
    sessions: int,
    turns: int,
    profile: Path | None = None,
    distinct: bool = False,
    history: int = 0,
) -> Window:
    """`sessions` concurrent focused sessions: a warm-up turn each (and `history` more, unmeasured),
    then `turns` measured turns each (recorded by py-spy into `profile` if given). The client is
    aiohttp's (its C parser): it shares the machine's cores with the server, and httpx's pure-Python
    parsing cost 7-11 ms of CPU a turn at 50 sessions, aiohttp's ~2."""
    headers = {"Authorization": f"Bearer {demo['api_key']}"}
    port = int(base.rsplit(":", 1)[1])
    connector = aiohttp.TCPConnector(limit=1000)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(base, headers=headers, connector=connector, timeout=timeout) as http:
        sids = await asyncio.gather(*(_new_session(http, demo) for _ in range(sessions)))
        await asyncio.gather(*(_converse(http, s, 1 + history) for s in sids))
        window = Window()
        before_sql, before_tx, before_embedding = await _counters(http)
        pids = server_pids(port)
        spy = py_spy(pids[0], profile) if profile else None
        before_cpu, before_db = procs.cpu_seconds(pids), database_cpu_seconds(url)
        before_client, started = time.process_time(), time.perf_counter()
        done = await asyncio.gather(*(_converse(http, s, turns, distinct) for s in sids))
        window.elapsed = time.perf_counter() - started
        window.client_seconds = time.process_time() - before_client
        window.cpu_seconds = procs.cpu_seconds(pids) - before_cpu
        window.database_seconds = database_cpu_seconds(url) - before_db
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its profile and exits
            spy.wait(timeout=60)
        after_sql, after_tx, after_embedding = await _counters(http)
    window.turns = [t for session in done for t in session]
    window.statements = {k: v - before_sql.get(k, 0.0) for k, v in after_sql.items()}
    window.transactions = after_tx - before_tx
    window.embedding_seconds = after_embedding - before_embedding
    return window


async def _new_session(http: aiohttp.ClientSession, demo: dict[str, Any]) -> str:
    """A session focused on the demo task; its id."""
    body = {"project_id": demo["project_id"], "focus": {"kind": "task", "id": demo["focus"]["task"]}}
    async with http.post("/v1/sessions", json=body) as resp:
        resp.raise_for_status()
        sid: str = (await resp.json())["id"]
        return sid


def _idle_memory(port: int) -> tuple[float, float]:
    """The server tree's (RSS, PSS) once it has settled: `/health` answers from the first worker
    ready, so read until two readings half a second apart agree within 2 MB."""
    last = procs.memory_mb(server_pids(port))
    for _ in range(20):
        time.sleep(0.5)
        now = procs.memory_mb(server_pids(port))
        if abs(now[0] - last[0]) < 2:
            return now
        last = now
    return last


def run_config(url: str, config: tuple[str, int, str], args: argparse.Namespace, profile: Path | None) -> Run:
    """One configuration on one fresh demo database and server: a throughput pass and a 1-session
    pass (and with `--long`, a 1-session pass late in a long session), the server's memory idle
    and after them, and the reference loop before and after the server."""
    engine, workers, client = config
    source = Path(args.source).resolve() if args.source else ROOT
    demo = prepare_database(url, SECRET, source, forked=FORK_FOR_TESTS)
    if args.others:
        print(f"  {load_others(url, args.others):,} other people's messages beside the measured sessions")
    print(f"{engine}, {workers} worker(s); load average before: {Path('/proc/loadavg').read_text()[:14]}")
    loops = loop_ms()
    env = {**args.env, **client_env(client)}
    started = time.perf_counter()
    serve = server_process(url, SECRET, workers=workers, env=env, source=source, forked=FORK_FOR_TESTS)
    with serve as base:
        ready = time.perf_counter() - started
        port = int(base.rsplit(":", 1)[1])
        idle = _idle_memory(port)
        busy = asyncio.run(measure(base, url, demo, args.sessions, args.turns, profile, args.distinct))
        quiet = asyncio.run(measure(base, url, demo, 1, args.quiet_turns, distinct=args.distinct))
        late = None
        if args.long:
            late = asyncio.run(
                measure(base, url, demo, 1, args.quiet_turns, distinct=args.distinct, history=args.long)
            )
        pids = server_pids(port)
        after, served = procs.memory_mb(pids), served_client(env, source, pids)
    windows = [busy, quiet, *([late] if late else [])]
    loop = statistics.median(loops + loop_ms())
    for w in windows:
        w.loop_ms = loop
    for problem in sorted({t.error for w in windows for t in w.turns if t.error})[:3]:
        print(f"  e.g. {problem}", flush=True)
    if profile is not None:
        print(summarize_profile(profile.read_text()), flush=True)
    turns = args.sessions * (1 + args.turns) + 1 + args.quiet_turns
    turns += (1 + args.long + args.quiet_turns) if args.long else 0
    return Run(ready, busy, quiet, late, served, idle, after, turns)


def configurations(dialect: str, workers: str, clients: str = "auto") -> list[tuple[str, int, str]]:
    """(engine, workers, model client) triples: SQLite always serves one process."""
    chosen = ["sqlite", "postgresql"] if dialect == "all" else [dialect]
    counts = [int(w) for w in workers.split(",")]
    engines = [("sqlite", 1)] * ("sqlite" in chosen) + [
        ("postgresql", w) for w in counts if "postgresql" in chosen
    ]
    return [(engine, w, client) for engine, w in engines for client in clients.split(",")]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions (throughput pass)")
    parser.add_argument("--turns", type=int, default=4, help="measured turns per session")
    parser.add_argument("--quiet-turns", type=int, default=10, help="measured turns of the 1-session pass")
    parser.add_argument("--dialect", default="all", choices=["sqlite", "postgresql", "all"])
    parser.add_argument("--workers", default="1,2", help="PostgreSQL worker counts, comma-separated")
    parser.add_argument("--profile", default=None, help="folder for py-spy profiles of the throughput pass")
    parser.add_argument("--source", default=None, help="serve this checkout instead (before/after runs)")
    parser.add_argument(
        "--long", type=int, default=0, help="also the 1-session pass after this many turns (a long session)"
    )
    parser.add_argument(
        "--others", type=int, default=0, help="other people's messages beside the demo user's"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="servers per configuration (alternating); the median is shown"
    )
    parser.add_argument(
        "--distinct", action="store_true", help="number each question: each new message pays its embedding"
    )
    parser.add_argument(
        "--provider", action="store_true", help="a fake OpenAI-compatible provider, not the offline model"
    )
    parser.add_argument(
        "--model-client",
        default="auto",
        help="with --provider: auto (the server's choice), litellm (ORRERY_MODEL_CLIENT=litellm), "
        "or both comma-separated, alternating",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run every configuration and print one markdown table."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    clients = args.model_client.split(",")
    if any(c not in CLIENTS for c in clients) or (clients != ["auto"] and not args.provider):
        parser.error(f"--model-client takes {' or '.join(CLIENTS)} (comma-separated), with --provider")
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    configs = configurations(args.dialect, args.workers, args.model_client)
    runs: dict[tuple[str, int, str], list[Run]] = {config: [] for config in configs}
    with databases(sorted({c[0] for c in configs})) as fresh, model_env(args.provider) as args.env:
        for repeat, (i, config) in itertools.product(range(args.repeat), enumerate(configs)):
            url = fresh(config[0], f"door_{repeat}_{i}", migrate=False)
            first = repeat == 0 and args.profile
            profile = Path(args.profile) / f"{'-'.join(map(str, config))}.txt" if first else None
            done = run_config(url, config, args, profile)
            runs[config].append(done)
            label = Label(config[0], config[1], done.client, done.ready)
            print(row(label, args.sessions, args.turns, done.busy, held=done), flush=True)
    rows = [HEADER]
    for (engine, workers, _), config_runs in runs.items():
        rows += rows_for(engine, workers, config_runs, args.sessions, args.turns, args.quiet_turns, args.long)
    print("\n" + footer(runs) + "\n\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
