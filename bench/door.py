"""The door benchmark: what one streamed chat turn costs the server, measured over real HTTP.

Starts `orrery serve` (the offline model, or with `--provider` litellm streaming from a fake
OpenAI-compatible provider, `bench/provider.py`) on a fresh demo database per configuration — SQLite, and
PostgreSQL with 1 and 2 workers — and runs `--sessions` sessions (focused on the demo task) x
`--turns` streamed turns on `POST /v1/sessions/{id}/messages` (SSE), then a 1-session pass at low
load. Each pass starts with one warm-up turn per session, outside the measured window. Per pass:
- server CPU ms per turn: utime+stime from /proc of the server process and every child (workers),
  before vs after the window — the server's own CPU, not the client's;
- beside it, the CPU the benchmark's own HTTP client and PostgreSQL (its server and backends) spent
  in the window: all three share the machine's cores, so they bound turns/s together;
- SQL statements and transactions per turn, counted in the server (`orrery_db_statements_total`,
  `orrery_db_transactions_total` on `/metrics`, summed over workers);
- of the server's CPU, what the local embedding model spent (`orrery_embedding_cpu_seconds_total`):
  the model's work, as the reply is the chat model's, which the offline model leaves out;
- turns/s, p50/p95 latency of the whole turn, p50 time to the first streamed byte and first text delta;
- the reply's shape (text deltas and tool calls per turn, from the SSE events) and errors;
- and per configuration the time from process start to the first 200 on `/health`.
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
[--workers 1,2] [--profile DIR] [--source DIR] [--distinct] [--provider] [--long N] [--repeat N]`. `--source`
serves another checkout (e.g. the code before a change; SQL counts need its
`orrery_db_statements_total`, else they read 0).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from bench import procs
from bench.common import databases
from bench.profiling import py_spy, summarize_profile
from bench.provider import model_env
from tests.support.load import ROOT, STARTED, prepare_database, server_process

SECRET = "bench-door"
FORK_FOR_TESTS = False
"""Test hook (tests/bench/test_door.py sets it): the database's two commands and the server are forked
from the test process's pre-imported launcher (tests/support/entrypoint.py), which saves the test
~4 CPU-s of imports a process; the benchmark always starts cold processes."""
QUESTION = "what should I do next on billing?"


@dataclass
class Turn:
    """What the client saw of one streamed turn (seconds from sending the request)."""

    latency: float
    first_byte: float | None = None
    first_text: float | None = None
    deltas: int = 0
    tool_calls: int = 0
    error: str | None = None


@dataclass
class Window:
    """One measured window: its turns and what the server spent on them."""

    turns: list[Turn] = field(default_factory=list)
    elapsed: float = 0.0
    cpu_seconds: float = 0.0
    client_seconds: float = 0.0
    """The benchmark's own CPU (its HTTP client) in the window: it shares the machine's cores."""
    database_seconds: float = 0.0
    """PostgreSQL's CPU in the window (its server and backends; none for SQLite, in the server)."""
    statements: dict[str, float] = field(default_factory=dict)
    transactions: float = 0.0
    embedding_seconds: float = 0.0
    """The local embedding model's CPU in the window (part of `cpu_seconds`, counted by the server)."""


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


def _database_pids(url: str) -> list[int]:
    """PostgreSQL's processes serving the benchmark (SQLite runs inside the server)."""
    port = make_url(url).port or 5432
    return procs.postgres_pids(port) if url.startswith("postgresql") else []


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
        before_cpu, before_db = procs.cpu_seconds(pids), procs.cpu_seconds(_database_pids(url))
        before_client, started = time.process_time(), time.perf_counter()
        done = await asyncio.gather(*(_converse(http, s, turns, distinct) for s in sids))
        window.elapsed = time.perf_counter() - started
        window.client_seconds = time.process_time() - before_client
        window.cpu_seconds = procs.cpu_seconds(pids) - before_cpu
        window.database_seconds = procs.cpu_seconds(_database_pids(url)) - before_db
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


def _pct_ms(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


HEADER = (
    "| engine | workers | ready s | sessions x turns | turns/s | CPU ms/turn | of which embedding "
    "| client / database CPU ms/turn "
    "| SQL/turn | tx/turn | p50 / p95 ms | first byte / first text p50 ms | deltas / tools per turn "
    "| errors |\n"
    "|---|---:|---:|---|---:|---:|---:|---|---|---:|---|---|---|---:|"
)


def _kinds(statements: dict[str, float], n: int) -> str:
    """`26.0 (S15 I2 U3 B6)`: statements per turn, then per kind (Select, Insert, Update, Delete,
    Begin — SQLite's explicit BEGIN — and Other)."""
    parts = [f"{k[0].upper()}{v / n:.3g}" for k, v in sorted(statements.items(), key=lambda kv: -kv[1]) if v]
    return f"{sum(statements.values()) / n:.1f} ({' '.join(parts)})"


def _cpu_ms(w: Window) -> float:
    return w.cpu_seconds * 1000 / max(len(w.turns), 1)


def _rate(w: Window) -> float:
    return sum(t.error is None for t in w.turns) / w.elapsed if w.elapsed else 0.0


def median_window(windows: list[Window]) -> tuple[Window, str, str]:
    """The window of median CPU per turn, its CPU's range over all the windows as a ` (min–max)`
    suffix, and turns/s as their own median and range (with two workers, how the client's
    connections fall between the workers moves throughput more than CPU: its own statistic)."""
    ranked = sorted(windows, key=_cpu_ms)
    chosen = ranked[(len(ranked) - 1) // 2]
    if len(windows) < 2:
        return chosen, "", f"{_rate(chosen):.1f}"
    rates = sorted(map(_rate, windows))
    return (
        chosen,
        f" ({_cpu_ms(ranked[0]):.1f}–{_cpu_ms(ranked[-1]):.1f})",
        f"{statistics.median(rates):.1f} ({rates[0]:.1f}–{rates[-1]:.1f})",
    )


def row(
    engine: str,
    workers: int,
    ready: float,
    sessions: int,
    turns: int,
    w: Window,
    after: int = 0,
    spread: tuple[str, str | None] = ("", None),
) -> str:
    """One table row for a measured window (`after` turns already in its session, if any; `spread`:
    for repeated windows, the CPU range suffix and the turns/s median with its range)."""
    n = max(len(w.turns), 1)
    ok = [t for t in w.turns if t.error is None]
    first = _pct_ms([t.first_byte for t in ok if t.first_byte is not None], 50)
    text = _pct_ms([t.first_text for t in ok if t.first_text is not None], 50)
    latencies = [t.latency for t in ok]
    return (
        f"| {engine} | {workers} | {ready:.1f} | {sessions} x {turns}{f' after {after}' if after else ''} "
        f"| {spread[1] or f'{_rate(w):.1f}'} "
        f"| {_cpu_ms(w):.1f}{spread[0]} | {w.embedding_seconds * 1000 / n:.1f} "
        f"| {w.client_seconds * 1000 / n:.1f} / {w.database_seconds * 1000 / n:.1f} "
        f"| {_kinds(w.statements, n)} | {w.transactions / n:.1f} "
        f"| {_pct_ms(latencies, 50):.0f} / {_pct_ms(latencies, 95):.0f} | {first:.0f} / {text:.0f} "
        f"| {sum(t.deltas for t in ok) / max(len(ok), 1):.1f} / "
        f"{sum(t.tool_calls for t in ok) / max(len(ok), 1):.1f} | {len(w.turns) - len(ok)} |"
    )


@dataclass
class Run:
    """One configuration's server, from start to stop: its passes' windows."""

    ready: float
    busy: Window
    quiet: Window
    late: Window | None


def run_config(url: str, engine: str, workers: int, args: argparse.Namespace, profile: Path | None) -> Run:
    """One configuration on one fresh demo database and server: a throughput pass and a 1-session
    pass (and with `--long`, a 1-session pass late in a long session)."""
    source = Path(args.source).resolve() if args.source else ROOT
    demo = prepare_database(url, SECRET, source, forked=FORK_FOR_TESTS)
    print(f"{engine}, {workers} worker(s); load average before: {Path('/proc/loadavg').read_text()[:14]}")
    started = time.perf_counter()
    serve = server_process(url, SECRET, workers=workers, env=args.env, source=source, forked=FORK_FOR_TESTS)
    with serve as base:
        ready = time.perf_counter() - started
        busy = asyncio.run(measure(base, url, demo, args.sessions, args.turns, profile, args.distinct))
        quiet = asyncio.run(measure(base, url, demo, 1, args.quiet_turns, distinct=args.distinct))
        late = None
        if args.long:
            late = asyncio.run(
                measure(base, url, demo, 1, args.quiet_turns, distinct=args.distinct, history=args.long)
            )
    windows = [busy, quiet, *([late] if late else [])]
    for problem in sorted({t.error for w in windows for t in w.turns if t.error})[:3]:
        print(f"  e.g. {problem}", flush=True)
    if profile is not None:
        print(summarize_profile(profile.read_text()), flush=True)
    return Run(ready, busy, quiet, late)


def rows_for(engine: str, workers: int, runs: list[Run], args: argparse.Namespace) -> list[str]:
    """A configuration's rows: each pass's window of median CPU over the runs, the throughput
    pass with its ranges when there are several runs."""
    ready = statistics.median(r.ready for r in runs)
    busy, cpu_range, rates = median_window([r.busy for r in runs])
    out = [row(engine, workers, ready, args.sessions, args.turns, busy, spread=(cpu_range, rates))]
    out.append(row(engine, workers, ready, 1, args.quiet_turns, median_window([r.quiet for r in runs])[0]))
    late = [r.late for r in runs if r.late is not None]
    if late:
        window = median_window(late)[0]
        out.append(row(engine, workers, ready, 1, args.quiet_turns, window, after=args.long + 1))
    return out


def configurations(dialect: str, workers: str) -> list[tuple[str, int]]:
    """(engine, workers) pairs: SQLite always serves one process."""
    chosen = ["sqlite", "postgresql"] if dialect == "all" else [dialect]
    counts = [int(w) for w in workers.split(",")]
    return [("sqlite", 1)] * ("sqlite" in chosen) + [
        ("postgresql", w) for w in counts if "postgresql" in chosen
    ]


def main(argv: list[str] | None = None) -> None:
    """Run every configuration and print one markdown table."""
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
        "--repeat", type=int, default=1, help="servers per configuration (alternating); the median is shown"
    )
    parser.add_argument(
        "--distinct", action="store_true", help="number each question: each new message pays its embedding"
    )
    parser.add_argument(
        "--provider",
        action="store_true",
        help="a fake OpenAI-compatible provider through litellm, not offline",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    configs = configurations(args.dialect, args.workers)
    runs: dict[tuple[str, int], list[Run]] = {config: [] for config in configs}
    with databases(sorted({engine for engine, _ in configs})) as fresh, model_env(args.provider) as args.env:
        for repeat, (i, (engine, workers)) in itertools.product(range(args.repeat), enumerate(configs)):
            url = fresh(engine, f"door_{repeat}_{i}", migrate=False)
            first = repeat == 0 and args.profile
            profile = Path(args.profile) / f"{engine}-{workers}.txt" if first else None
            done = run_config(url, engine, workers, args, profile)
            runs[engine, workers].append(done)
            print(row(engine, workers, done.ready, args.sessions, args.turns, done.busy), flush=True)
    rows = [HEADER]
    for (engine, workers), config_runs in runs.items():
        rows += rows_for(engine, workers, config_runs, args)
    print("\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
