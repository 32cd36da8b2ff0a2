"""What the door benchmark measured and its table: the turns a client saw, each window's cost, each
server's run (its client, memory and the reference loop beside it), one markdown row per pass."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import NamedTuple

from bench.common import REFERENCE_LOOP_MS, normalised


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
    loop_ms: float = float("nan")
    """The reference loop's median CPU ms around this window's server (`bench.common.loop_ms`)."""


@dataclass
class Run:
    """One configuration's server, from start to stop: its passes' windows, which model client
    served, and the server's memory (RSS, PSS in MB) idle and after all its turns."""

    ready: float
    busy: Window
    quiet: Window
    late: Window | None
    client: str = "offline"
    idle: tuple[float, float] = (0.0, 0.0)
    after: tuple[float, float] = (0.0, 0.0)
    served: int = 0
    """Turns the server had answered when `after` was read (warm-ups included)."""


class Label(NamedTuple):
    """A row's first cells: its configuration and how long its server took to answer `/health`."""

    engine: str
    workers: int
    client: str
    ready: float


def _pct_ms(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


HEADER = (
    "| engine | workers | client | ready s | sessions x turns | turns/s | CPU ms/turn "
    f"| at {REFERENCE_LOOP_MS} ms loop | of which embedding "
    "| client / database CPU ms/turn "
    "| SQL/turn | tx/turn | p50 / p95 ms | first byte / first text p50 ms | deltas / tools per turn "
    "| RSS (PSS) MB idle / after | errors |\n"
    "|---|---:|---|---:|---|---:|---:|---:|---:|---|---|---:|---|---|---|---|---:|"
)


def _kinds(statements: dict[str, float], n: int) -> str:
    """`26.0 (S15 I2 U3 B6)`: statements per turn, then per kind (Select, Insert, Update, Delete,
    Begin — SQLite's explicit BEGIN — and Other)."""
    parts = [f"{k[0].upper()}{v / n:.3g}" for k, v in sorted(statements.items(), key=lambda kv: -kv[1]) if v]
    return f"{sum(statements.values()) / n:.1f} ({' '.join(parts)})"


def cpu_ms(w: Window) -> float:
    """The server's CPU ms per turn in the window."""
    return w.cpu_seconds * 1000 / max(len(w.turns), 1)


def database_ms(w: Window) -> float:
    """PostgreSQL's CPU ms per measured turn (its server and backends; 0 on SQLite)."""
    return w.database_seconds * 1000 / max(len(w.turns), 1)


def rate(w: Window) -> float:
    """Turns answered without error per second of the window."""
    return sum(t.error is None for t in w.turns) / w.elapsed if w.elapsed else 0.0


def median_window(windows: list[Window]) -> tuple[Window, str, str]:
    """The window of median CPU per turn, its CPU's range over all the windows as a ` (min–max)`
    suffix, and turns/s as their own median and range (with two workers, how the client's
    connections fall between the workers moves throughput more than CPU: its own statistic)."""
    ranked = sorted(windows, key=cpu_ms)
    chosen = ranked[(len(ranked) - 1) // 2]
    if len(windows) < 2:
        return chosen, "", f"{rate(chosen):.1f}"
    rates = sorted(map(rate, windows))
    return (
        chosen,
        f" ({cpu_ms(ranked[0]):.1f}–{cpu_ms(ranked[-1]):.1f})",
        f"{statistics.median(rates):.1f} ({rates[0]:.1f}–{rates[-1]:.1f})",
    )


def memory(run: Run | None) -> str:
    """`412 (371) / 498 (450)`: RSS (PSS) idle and after, MB; `–` for a pass without its own."""
    if run is None:
        return "–"
    (rss0, pss0), (rss1, pss1) = run.idle, run.after
    return f"{rss0:.0f} ({pss0:.0f}) / {rss1:.0f} ({pss1:.0f})"


def row(
    label: Label,
    sessions: int,
    turns: int,
    w: Window,
    after: int = 0,
    spread: tuple[str, str | None] = ("", None),
    held: Run | None = None,
) -> str:
    """One table row for a window of `label`'s configuration (`after` turns already in its session, if
    any; `spread`: for repeated windows, the CPU range suffix and the turns/s median with its range;
    `held`: the run whose memory the row shows)."""
    n = max(len(w.turns), 1)
    ok = [t for t in w.turns if t.error is None]
    first = _pct_ms([t.first_byte for t in ok if t.first_byte is not None], 50)
    text = _pct_ms([t.first_text for t in ok if t.first_text is not None], 50)
    latencies = [t.latency for t in ok]
    return (
        f"| {label.engine} | {label.workers} | {label.client} | {label.ready:.1f} "
        f"| {sessions} x {turns}{f' after {after}' if after else ''} "
        f"| {spread[1] or f'{rate(w):.1f}'} "
        f"| {cpu_ms(w):.1f}{spread[0]} | {normalised(cpu_ms(w), w.loop_ms):.1f} "
        f"| {w.embedding_seconds * 1000 / n:.1f} "
        f"| {w.client_seconds * 1000 / n:.1f} / {w.database_seconds * 1000 / n:.1f} "
        f"| {_kinds(w.statements, n)} | {w.transactions / n:.1f} "
        f"| {_pct_ms(latencies, 50):.0f} / {_pct_ms(latencies, 95):.0f} | {first:.0f} / {text:.0f} "
        f"| {sum(t.deltas for t in ok) / max(len(ok), 1):.1f} / "
        f"{sum(t.tool_calls for t in ok) / max(len(ok), 1):.1f} | {memory(held)} | {len(w.turns) - len(ok)} |"
    )


def rows_for(
    engine: str, workers: int, runs: list[Run], sessions: int, turns: int, quiet: int, long: int
) -> list[str]:
    """A configuration's rows: each pass's window of median CPU over the runs, the throughput
    pass with its ranges when there are several runs and the memory of the server that measured it."""
    label = Label(engine, workers, runs[0].client, statistics.median(r.ready for r in runs))
    busy, cpu_range, rates = median_window([r.busy for r in runs])
    held = next(r for r in runs if r.busy is busy)
    out = [row(label, sessions, turns, busy, spread=(cpu_range, rates), held=held)]
    out.append(row(label, 1, quiet, median_window([r.quiet for r in runs])[0]))
    late = [r.late for r in runs if r.late is not None]
    if late:
        out.append(row(label, 1, quiet, median_window(late)[0], after=long + 1))
    return out


def footer(runs: dict[tuple[str, int, str], list[Run]]) -> str:
    """Below the table: what "after" means for each configuration's memory, and the loop's range."""
    loops = sorted(w.loop_ms for rs in runs.values() for r in rs for w in (r.busy, r.quiet))
    served = sorted({r.served for rs in runs.values() for r in rs})
    return (
        f"RSS (PSS): the server's process tree idle (started, before any turn) and after "
        f"{'/'.join(map(str, served))} turns (warm-ups included). Reference loop "
        f"(`bench.common.reference_loop`, process CPU, median of 5 around each server): "
        f"{loops[0]:.1f}–{loops[-1]:.1f} ms; 'at {REFERENCE_LOOP_MS} ms loop' = CPU × {REFERENCE_LOOP_MS} "
        f"/ loop, approximate."
    )
