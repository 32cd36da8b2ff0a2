"""Prometheus metrics: turns, latencies, tokens, tool calls, errors and jobs, labelled per agent.

With several worker processes, `PROMETHEUS_MULTIPROC_DIR` must be set before this module is first
imported (`orrery serve --workers N` does it); every process then writes its samples there and
`/metrics` adds them up, so any worker answers for all of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    multiprocess,
)
from prometheus_client.exposition import choose_encoder

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

# no `<counter>_created` / `<histogram>_created` series beside each one (they doubled the series
# count; Prometheus reads a counter's reset from the counter itself)
disable_created_metrics()  # type: ignore[no-untyped-call]

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)

TURNS = Counter(
    "orrery_turns", "Chat turns finished, by agent and outcome (ok, error, replayed).", ["agent", "outcome"]
)
TURN_SECONDS = Histogram(
    "orrery_turn_seconds",
    "Wall time of a turn, message stored to reply stored.",
    ["agent"],
    buckets=LATENCY_BUCKETS,
)
MODEL_SECONDS = Histogram(
    "orrery_model_seconds",
    "Wall time of one model request (a turn may make several).",
    ["agent"],
    buckets=LATENCY_BUCKETS,
)
TOKENS = Counter("orrery_tokens", "Model tokens, by agent and direction (in, out).", ["agent", "direction"])
TOOL_CALLS = Counter(
    "orrery_tool_calls", "Tool calls, by agent, tool and outcome (ok, error).", ["agent", "tool", "outcome"]
)
ERRORS = Counter("orrery_errors", "Failed or refused turns, by agent and kind.", ["agent", "kind"])
JOBS = Counter("orrery_jobs", "Background jobs run, by kind and outcome (ok, error).", ["kind", "outcome"])
DB_STATEMENTS = Counter(
    "orrery_db_statements",
    "SQL statements sent to the database, by kind (select, insert, update, delete, begin, other).",
    ["kind"],
)
DB_TRANSACTIONS = Counter("orrery_db_transactions", "Database transactions begun.")
EMBEDDING_CPU = Counter(
    "orrery_embedding_cpu_seconds",
    "CPU seconds the local embedding model spent (like a model's time, apart from Orrery's own work).",
)
EMBEDDED_TEXTS = Counter("orrery_embedded_texts", "Texts the local embedding model embedded.")
HISTORY_CACHE = Counter(
    "orrery_history_cache",
    "History cache events by kind: hit, miss (a window read from the database), eviction (a window"
    " dropped to stay within ORRERY_HISTORY_CACHE_MB).",
    ["event"],
)
HISTORY_CACHE_BYTES = Gauge(
    "orrery_history_cache_bytes",
    "Bytes the history cache holds (estimated), summed over live workers.",
    multiprocess_mode="livesum",
)
_CACHE_EVENTS = {event: HISTORY_CACHE.labels(event=event) for event in ("hit", "miss", "eviction")}
STATEMENT_KINDS = ("select", "insert", "update", "delete", "begin")


def record_turn(
    agent: str,
    seconds: float,
    input_tokens: int | None,
    output_tokens: int | None,
    tool_calls: Iterable[Mapping[str, Any]],
) -> None:
    """A turn that stored its reply."""
    TURNS.labels(agent=agent, outcome="ok").inc()
    TURN_SECONDS.labels(agent=agent).observe(seconds)
    TOKENS.labels(agent=agent, direction="in").inc(input_tokens or 0)
    TOKENS.labels(agent=agent, direction="out").inc(output_tokens or 0)
    for call in tool_calls:
        outcome = "error" if call.get("error") else "ok"
        tool = "_client" if call.get("client") else tool_label(call.get("name"))  # a caller's: any name
        TOOL_CALLS.labels(agent=agent, tool=tool, outcome=outcome).inc()


def tool_label(name: object) -> str:
    """A tool's metric label: its name when it is a registered tool, else `_unknown` (a name the
    model invented would otherwise start a new series per invention)."""
    return name if isinstance(name, str) and _is_known_tool(name) else UNKNOWN_TOOL


def know_tools(is_known: Callable[[str], bool]) -> None:
    """How a registered tool name is recognised (the tool registry says, plugins' tools included)."""
    global _is_known_tool  # noqa: PLW0603 - set once, by the registry, at import
    _is_known_tool = is_known


UNKNOWN_TOOL = "_unknown"
_is_known_tool: Callable[[str], bool] = lambda _name: False  # noqa: E731 - until the registry says


def record_embedding(texts: int, cpu_seconds: float) -> None:
    """Texts the local model embedded and the CPU it spent on them."""
    EMBEDDED_TEXTS.inc(texts)
    EMBEDDING_CPU.inc(cpu_seconds)


def record_history_cache(event: str, held_bytes: int | None = None) -> None:
    """A history cache hit, miss or eviction, and the bytes it holds after a lookup."""
    _CACHE_EVENTS[event].inc()
    if held_bytes is not None:
        HISTORY_CACHE_BYTES.set(held_bytes)


def record_error(agent: str, kind: str) -> None:
    """A turn that failed (`kind`: the exception's class name) or was refused (`rate_limited`)."""
    TURNS.labels(agent=agent, outcome="error").inc()
    ERRORS.labels(agent=agent, kind=kind).inc()


def count_statements(engine: AsyncEngine) -> None:
    """Count every statement and transaction on this engine (and the engines derived from it with
    `execution_options`, which share its events), so a benchmark can read SQL per turn from outside."""
    from sqlalchemy import event

    sync = engine.sync_engine
    if event.contains(sync, "before_cursor_execute", _on_statement):
        return
    event.listen(sync, "before_cursor_execute", _on_statement)
    event.listen(sync, "begin", _on_begin)


_STATEMENT_COUNTERS = {kind: DB_STATEMENTS.labels(kind=kind) for kind in (*STATEMENT_KINDS, "other")}


def _on_statement(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
    verb = statement.lstrip()[:6].rstrip().lower()  # "BEGIN IMMEDIATE" -> "begin"
    _STATEMENT_COUNTERS.get(verb, _STATEMENT_COUNTERS["other"]).inc()


def _on_begin(conn: Any) -> None:
    if not conn.get_execution_options().get("orrery_single"):  # db.engine.SINGLE_OPTION: no transaction
        DB_TRANSACTIONS.inc()


def exposition(accept: str = "") -> tuple[bytes, str]:
    """What `/metrics` serves: this process's samples, or every worker's in multiprocess mode, in
    the format the `Accept` header asks for (OpenMetrics, else the Prometheus text format)."""
    encode, content_type = choose_encoder(accept)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return encode(registry), content_type
    return encode(REGISTRY), content_type
