"""Before against after, paired: the door benchmark's turn on two servers that run side by side.

On this machine, one server's CPU per turn moves by ±20% from one minute to the next (the same code
measured 12.6 and 20.7 ms a turn in runs minutes apart), so two `bench.door` runs of a change that
saves 5% tell nothing. Here both checkouts serve at once, each on its own fresh demo database, and
their throughput windows (`door.measure`: `--sessions` sessions x `--turns` turns) alternate
before, after, after, before, ... so a slow minute hits both alike. The difference of each pair
(after minus before) and its mean's standard error say whether the change helped. A window is
~3 s at the defaults; one side waits while the other is measured.

Run `python -m bench.paired --before DIR [--after DIR] [--dialect postgresql|sqlite] [--workers N]
[--pairs 8] [--sessions 50] [--turns 2] [--distinct] [--provider] [--model-client auto|litellm]`
(`--after` defaults to this checkout; `git worktree add` gives the code before a change a folder of
its own). `--provider` serves both from one fake OpenAI-compatible provider (`bench/provider.py`)
through the normal model settings, so each side's own model client serves (printed; `--model-client
litellm` sends both through litellm); `--distinct` asks a new question every turn. Before each
window the reference loop is timed (`bench.common.reference_loop`), and the table gives the CPU
loop-normalised too (× 41.5 / loop ms, approximate). On PostgreSQL both sides share one server, and
the table adds its CPU a turn (its server and backends, read from /proc while the other side waits).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import door
from bench.common import REFERENCE_LOOP_MS, databases, loop_ms, normalised
from bench.door_report import cpu_ms, database_ms, rate
from bench.provider import CLIENTS, client_env, model_env, served_client
from tests.support.load import ROOT, prepare_database, server_process

ORDER = ("before", "after", "after", "before")
"""Each block of two pairs: the order cancels a steady drift within the block."""


@dataclass
class Side:
    """One checkout's server and what its windows measured."""

    base: str
    url: str
    demo: dict[str, Any]
    source: Path
    cpu_ms: list[float] = field(default_factory=list)
    loops: list[float] = field(default_factory=list)
    """The reference loop's median ms just before each window."""
    rates: list[float] = field(default_factory=list)
    database_ms: list[float] = field(default_factory=list)
    """PostgreSQL's CPU ms a turn in each window (both sides share one server; the other side is
    idle while one is measured)."""
    errors: int = 0

    @property
    def normalised(self) -> list[float]:
        """Each window's CPU ms a turn at the reference loop's speed."""
        return [normalised(cpu, loop) for cpu, loop in zip(self.cpu_ms, self.loops, strict=True)]


def _start(stack: ExitStack, fresh: Any, args: argparse.Namespace, name: str, source: Path) -> Side:
    """Migrate a demo database with `source`'s code and serve it; one unmeasured warm-up window."""
    url = fresh(args.dialect, f"paired_{name}", migrate=False)
    forked = door.FORK_FOR_TESTS and source == ROOT
    demo = prepare_database(url, door.SECRET, source, forked=forked)
    env = {**args.env, **client_env(args.model_client)}
    serve = server_process(url, door.SECRET, workers=args.workers, env=env, source=source, forked=forked)
    side = Side(stack.enter_context(serve), url, demo, source)
    asyncio.run(door.measure(side.base, url, demo, args.sessions, 1))
    return side


def _window(side: Side, args: argparse.Namespace) -> str:
    """Measure one window on `side`, after timing the reference loop; its line of output."""
    side.loops.append(statistics.median(loop_ms()))
    w = asyncio.run(
        door.measure(side.base, side.url, side.demo, args.sessions, args.turns, distinct=args.distinct)
    )
    side.cpu_ms.append(cpu_ms(w))
    side.rates.append(rate(w))
    side.database_ms.append(database_ms(w))
    side.errors += sum(t.error is not None for t in w.turns)
    line = f"{side.cpu_ms[-1]:6.1f} ms/turn (loop {side.loops[-1]:.1f} ms) {side.rates[-1]:6.1f} turns/s"
    return line + (f", PostgreSQL {side.database_ms[-1]:.2f} ms/turn" if args.dialect == "postgresql" else "")


def _client(side: Side, args: argparse.Namespace) -> str:
    """Which model client served `side` (read while it still runs)."""
    port = int(side.base.rsplit(":", 1)[1])
    env = {**args.env, **client_env(args.model_client)}
    return served_client(env, side.source, door.server_pids(port))


def _difference(label: str, before: list[float], after: list[float]) -> str:
    """`after - before` per pair: median, mean and the mean's standard error."""
    diffs = [b - a for a, b in zip(before, after, strict=True)]
    error = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
    return (
        f"| {label} | {statistics.median(before):.1f} | {statistics.median(after):.1f} "
        f"| {statistics.median(diffs):+.2f} | {statistics.mean(diffs):+.2f} ± {error:.2f} |"
    )


def main(argv: list[str] | None = None) -> None:
    """Serve both checkouts, alternate their windows, print each window and the paired table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", required=True, help="the checkout before the change")
    parser.add_argument("--after", default=str(ROOT), help="the checkout after it (default: this one)")
    parser.add_argument("--dialect", default="postgresql", choices=["sqlite", "postgresql"])
    parser.add_argument("--workers", type=int, default=1, help="worker processes per server (PostgreSQL)")
    parser.add_argument("--pairs", type=int, default=8, help="windows per side")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=2, help="turns per session in a window")
    parser.add_argument("--distinct", action="store_true", help="a new question every turn (door's)")
    parser.add_argument("--provider", action="store_true", help="both from one fake provider")
    parser.add_argument(
        "--model-client", default="auto", choices=CLIENTS, help="litellm: ORRERY_MODEL_CLIENT=litellm"
    )
    args = parser.parse_args(argv)
    with databases([args.dialect]) as fresh, model_env(args.provider) as args.env, ExitStack() as stack:
        sides = {
            name: _start(stack, fresh, args, name, Path(getattr(args, name)).resolve())
            for name in ("before", "after")
        }
        for i in range(2 * args.pairs):
            name = ORDER[i % len(ORDER)]
            print(f"{name:6} {_window(sides[name], args)}", flush=True)
        clients = [_client(side, args) for side in sides.values()]
    before, after = sides["before"], sides["after"]
    pg = args.dialect == "postgresql"
    loops = sorted(before.loops + after.loops)
    print(
        f"\n{args.dialect}, {args.workers} worker(s), {args.pairs} pairs of {args.sessions} x {args.turns}, "
        f"model client {clients[0]} / {clients[1]}, errors {before.errors} / {after.errors}; "
        f"reference loop {statistics.median(loops):.1f} ms ({loops[0]:.1f}–{loops[-1]:.1f}), "
        f"load average after {Path('/proc/loadavg').read_text()[:14]}\n\n"
        "| per window | before (median) | after (median) | after - before (median) | mean ± s.e. |\n"
        "|---|---:|---:|---:|---:|\n"
        f"{_difference('server CPU ms/turn', before.cpu_ms, after.cpu_ms)}\n"
        f"{_difference(f'at {REFERENCE_LOOP_MS} ms loop', before.normalised, after.normalised)}\n"
        f"{_difference('turns/s', before.rates, after.rates)}"
        + (f"\n{_difference('PostgreSQL CPU ms/turn', before.database_ms, after.database_ms)}" * pg)
    )


if __name__ == "__main__":
    main()
