"""HTTP load benchmark: N concurrent streamed chats against uvicorn (offline model, PostgreSQL).

Each client opens its own session and sends `--turns` messages one after another over SSE. Reports
turns/s, p50/p95 latency to the first event and to completion, and checks afterwards that every
session holds exactly its messages, in order, none lost or duplicated.

Run `python -m bench.http_load [--clients 20] [--turns 5] [--dialect postgresql]`.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import threading
import time
from typing import Any

import httpx
import uvicorn

from bench.common import bench_settings, databases
from orrery.app.http import create_app
from orrery.db.engine import Database
from orrery.demo.workspace import load_demo
from orrery.repo import chat


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _client(
    base: str, key: str, project: str, turns: int, first: list[float], total: list[float]
) -> str:
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        sid = (await http.post("/v1/sessions", json={"project_id": project})).json()["id"]
        for i in range(turns):
            started = time.perf_counter()
            async with http.stream(
                "POST",
                f"/v1/sessions/{sid}/messages",
                json={"content": f"turn {i}: what should I do next on billing?"},
            ) as response:
                seen_first = False
                async for line in response.aiter_lines():
                    if line.startswith("event:") and not seen_first:
                        first.append(time.perf_counter() - started)
                        seen_first = True
            total.append(time.perf_counter() - started)
    return str(sid)


async def _verify(url: str, user_id: Any, sessions: list[str], turns: int) -> str:
    db = Database.from_settings(bench_settings(url))
    try:
        async with db.sessions() as s:
            for sid in sessions:
                messages = await chat.list_messages(s, user_id, sid)
                roles = [m.role for m in messages]
                expected = [f"turn {i}: what should I do next on billing?" for i in range(turns)]
                if roles != ["user", "assistant"] * turns or [m.content for m in messages[::2]] != expected:
                    return f"FAILED for session {sid}: {roles}"
                if [m.seq for m in messages] != list(range(1, 2 * turns + 1)):
                    return f"FAILED: gaps or duplicates in session {sid}"
        return "every session complete and in order"
    finally:
        await db.dispose()


async def _load(settings: Any) -> Any:
    db = Database.from_settings(settings)
    try:
        return await load_demo(db, settings.secret_key)
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> None:
    """Run the load test and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--dialect", default="postgresql")
    args = parser.parse_args(argv)
    with databases([args.dialect]) as fresh:
        url = fresh(args.dialect, "http_load")
        settings = bench_settings(url).model_copy(update={"pattern_refresh_minutes": 0, "db_pool_size": 30})
        demo = asyncio.run(_load(settings))
        port = _free_port()
        server = uvicorn.Server(
            uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        first: list[float] = []
        total: list[float] = []

        async def run() -> list[str]:
            return await asyncio.gather(
                *(
                    _client(
                        f"http://127.0.0.1:{port}",
                        demo.api_key,
                        str(demo.project_id),
                        args.turns,
                        first,
                        total,
                    )
                    for _ in range(args.clients)
                )
            )

        started = time.perf_counter()
        sessions = asyncio.run(run())
        elapsed = time.perf_counter() - started
        server.should_exit = True
        thread.join(timeout=10)
        verdict = asyncio.run(_verify(url, demo.user_id, sessions, args.turns))

    def pct(values: list[float], q: int) -> float:
        return statistics.quantiles(values, n=100)[q - 1] * 1000

    print(
        "| engine | clients x turns | turns/s | first event p50 / p95 ms | completion p50 / p95 ms "
        "| integrity |"
    )
    print("|---|---|---:|---|---|---|")
    print(
        f"| {args.dialect} | {args.clients} x {args.turns} | {len(total) / elapsed:.1f} | "
        f"{pct(first, 50):.0f} / {pct(first, 95):.0f} | {pct(total, 50):.0f} / {pct(total, 95):.0f} "
        f"| {verdict} |"
    )


if __name__ == "__main__":
    main()
