"""Orchestrator benchmark: everything a turn costs except the model, with an instant scripted model.

Sequential turns on one session give median and p95 overhead, and the CPU a turn costs in this
process split into context assembly, the model run (agent, tools, the scripted model, events) and
persistence; 50 sessions chatting concurrently give turns per second. Both dialects, on the demo
workspace (focused chat, knowledge base, linked entities). Run `python -m bench.orchestrator` (part
of `make bench`). CPU includes SQLite's own work (it runs in this process), not PostgreSQL's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bench.common import bench_settings, databases
from orrery.agents.orchestrator import Orchestrator
from orrery.db.engine import Database
from orrery.demo.workspace import load_demo
from orrery.repo import chat


def _instant() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Noted. Next, finish the legal review.")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "Noted. Next, finish the legal review."

    return FunctionModel(respond, stream_function=stream)


async def _session(db: Database, demo: Any) -> Any:
    async with db.transaction() as s:
        return (
            await chat.create_session(
                s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"]
            )
        ).id


PHASES = {
    "context": (("module", "turn_context"),),
    "persistence": (("module", "store_user_message"), ("module", "persist_reply")),
}
"""What is timed per phase: the function as the orchestrator's module calls it (the turn's context,
the turn store's writes); the model run is the rest of the turn. A name that is gone fails
the benchmark (it no longer reads zero)."""


@contextmanager
def _time_phases(orchestrator: Orchestrator, cpu: dict[str, float]) -> Iterator[None]:
    """While inside, the phases' functions add their CPU time up in `cpu` (restored after)."""
    from orrery.agents import orchestrator as module

    replaced: list[tuple[Any, str, Any]] = []
    for phase, names in PHASES.items():
        for where, name in names:
            owner = orchestrator if where == "orchestrator" else module
            function = getattr(owner, name)

            async def timed(*args: Any, _function: Any = function, _phase: str = phase, **kw: Any) -> Any:
                started = time.process_time()
                try:
                    return await _function(*args, **kw)
                finally:
                    cpu[_phase] += time.process_time() - started

            replaced.append((owner, name, function))
            setattr(owner, name, timed)
    try:
        yield
    finally:
        for owner, name, function in replaced:
            if owner is orchestrator:
                delattr(owner, name)  # the class's method again
            else:
                setattr(owner, name, function)


async def _measure(url: str, turns: int, sessions: int) -> str:
    settings = bench_settings(url).model_copy(update={"pattern_refresh_minutes": 0, "db_pool_size": 20})
    db = Database.from_settings(settings)
    try:
        demo = await load_demo(db, "bench")
        orchestrator = Orchestrator(db, settings, lambda name, s: _instant())
        sid = await _session(db, demo)

        async def one(session_id: Any, i: int) -> float:
            started = time.perf_counter()
            async for event in orchestrator.turn(demo.user_id, session_id, f"What should I do next? ({i})"):
                if event.type == "error":
                    raise RuntimeError(event.data["message"])
            return time.perf_counter() - started

        await one(sid, -1)  # warm-up
        cpu = dict.fromkeys(("context", "persistence"), 0.0)
        with _time_phases(orchestrator, cpu):
            cpu_started = time.process_time()
            timings = [await one(sid, i) for i in range(turns)]
            total = (time.process_time() - cpu_started) / turns * 1000
        context, persistence = cpu["context"] / turns * 1000, cpu["persistence"] / turns * 1000
        ids = [await _session(db, demo) for _ in range(sessions)]
        started = time.perf_counter()
        await asyncio.gather(*(_chat(one, s, 4) for s in ids))
        elapsed = time.perf_counter() - started
        p95 = statistics.quantiles(timings, n=20)[-1]
        return (
            f"{statistics.median(timings) * 1000:.1f} | {p95 * 1000:.1f} | {total:.1f} | {context:.1f} | "
            f"{total - context - persistence:.1f} | {persistence:.1f} | "
            f"{sessions * 4 / elapsed:.1f} turns/s ({sessions} sessions x 4 turns in {elapsed:.1f}s)"
        )
    finally:
        await db.dispose()


async def _chat(one: Any, session_id: Any, turns: int) -> None:
    for i in range(turns):
        await one(session_id, i)


def main(argv: list[str] | None = None) -> None:
    """Run the orchestrator benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialects", default="sqlite,postgresql")
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args(argv)
    dialects = args.dialects.split(",")
    rows = []
    with databases(dialects) as fresh:
        for dialect in dialects:
            url = fresh(dialect, "orchestrator_bench")
            rows.append(f"| {dialect} | {asyncio.run(_measure(url, args.turns, args.sessions))} |")
            print(rows[-1], flush=True)
    print(
        "\n| engine | overhead per turn, median ms | p95 ms | CPU ms per turn | context | model run "
        "| persistence | concurrent throughput |\n|---|---:|---:|---:|---:|---:|---:|---|"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
