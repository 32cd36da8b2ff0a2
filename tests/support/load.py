"""Drive Orrery over HTTP like a load test would, and check the stored conversations afterwards.

Shared by the load tests (`tests/api/test_load.py`) and the benchmark (`bench/load_workers.py`):
- `server_process` starts a real server process (`orrery serve`, offline model) on a free port;
- `run_load` opens sessions and sends turns (half SSE, half JSON), plus bursts of concurrent
  requests on the same session and duplicate Idempotency-Keys;
- `verify_conversations` reads the database: every session has exactly its turns, `seq` contiguous,
  each reply right after its message, no message stored twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message
from tests.support.entrypoint import Forked, server_launcher

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _orrery_env(database_url: str, secret: str, source: Path, env: dict[str, str] | None) -> dict[str, str]:
    """What a child's environment sets besides the test process's own."""
    return {
        "PYTHONPATH": os.pathsep.join([str(source / "backend"), str(source)]),  # orrery, bench, tests
        "DATABASE_URL": database_url,
        "ORRERY_SECRET_KEY": secret,
        "ORRERY_MODEL": "offline",
        "ORRERY_LOG_LEVEL": "warning",
        **(env or {}),
    }


def _child_env(database_url: str, secret: str, source: Path, env: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **_orrery_env(database_url, secret, source, env)}


ENTRY = """import sys
sys.argv[0] = "orrery"
from orrery.cli import main  # the console script's entry point
main()
"""


def _cli() -> list[str]:
    return [sys.executable, "-c", ENTRY]


def prepare_database(
    database_url: str, secret: str, source: Path = ROOT, *, forked: bool = False
) -> dict[str, str]:
    """`orrery db upgrade` + `orrery demo load --json` with the code in `source`: the demo's ids and key.
    `forked`: both commands from the test process's pre-imported launcher, as `server_process`."""
    if forked and source == ROOT:
        overrides = _orrery_env(database_url, secret, source, None)
        for args in (["db", "upgrade"], ["demo", "load", "--json"]):
            code, stdout, stderr = server_launcher().run_split(args, env=overrides)
            assert code == 0, f"orrery {' '.join(args)} exited {code}:\n{stdout}{stderr}"
        return json.loads(stdout)  # type: ignore[no-any-return]
    env = _child_env(database_url, secret, source, None)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*_cli(), "db", "upgrade"], cwd=tmp, env=env, check=True, capture_output=True)
        loaded = subprocess.run(
            [*_cli(), "demo", "load", "--json"], cwd=tmp, env=env, check=True, capture_output=True
        )
    data: dict[str, str] = json.loads(loaded.stdout)
    return data


STARTED: dict[int, int] = {}
"""The server process `server_process` started on each port, while it runs (pid by port)."""


@contextmanager
def server_process(
    database_url: str,
    secret: str,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    source: Path = ROOT,
    forked: bool = False,
) -> Iterator[str]:
    """`orrery serve` (code from `source`) in a child process, cwd outside the repo so no `.env` is
    read; yields its base URL. `forked`: from the test process's pre-imported server launcher
    (`tests/support/entrypoint.py`), which saves the tests ~4 CPU-s of imports a start; the
    benchmarks start cold processes."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        child_env = _child_env(database_url, secret, source, env)
        log_path = Path(tmp) / "server.log"
        command = [*_cli(), "serve", "--host", "127.0.0.1", "--port", str(port)]
        if workers != 1:
            command += ["--workers", str(workers)]
        proc: subprocess.Popen[bytes] | Forked
        if forked and source == ROOT:
            proc = server_launcher().spawn(command[len(_cli()) :], child_env, Path(tmp), log_path)
        else:
            with open(log_path, "w") as log:
                proc = subprocess.Popen(command, cwd=tmp, env=child_env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        STARTED[port] = proc.pid
        try:
            _wait_healthy(proc, base, log_path)
            yield base
        finally:
            del STARTED[port]
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(proc: subprocess.Popen[bytes] | Forked, base: str, log_path: Path) -> None:
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"server did not become healthy:\n{log_path.read_text()[-3000:]}")


@dataclass
class LoadResult:
    """What the clients saw: per-turn latencies (s), failures, and what each session should hold."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    expected: dict[str, list[str]] = field(default_factory=dict)
    """session id -> the distinct user messages sent to it (each must be stored exactly once)."""
    replays: list[tuple[str, str]] = field(default_factory=list)
    """(message_id of the first answer, message_id of the duplicate's answer) per duplicate key."""
    elapsed: float = 0.0
    retries: int = 0
    """Turns answered 503 (or `unavailable`), or cut by a dropped connection, and sent again."""

    @property
    def turns(self) -> int:
        return len(self.latencies)


RETRIES = 5
"""How often a client retries a turn answered 503 / `unavailable` (after `Retry-After`) or cut by a
dropped connection; always with the same Idempotency-Key, so a retry never runs a turn twice."""


async def _turn(
    http: httpx.AsyncClient,
    sid: str,
    content: str,
    *,
    sse: bool,
    key: str | None,
    result: LoadResult,
) -> str | None:
    """One turn, as a well-behaved client sends it: with an Idempotency-Key, retried after
    `Retry-After` when the server says it is unavailable. The stored reply's message id, or None
    (and a failure recorded)."""
    headers = {"Idempotency-Key": key or f"turn-{uuid.uuid4().hex}"}
    started = time.perf_counter()
    for attempt in range(RETRIES + 1):
        outcome, detail = await _attempt(http, sid, content, sse, headers)
        if outcome == "done":
            result.latencies.append(time.perf_counter() - started)
            return detail
        if outcome == "retry" and attempt < RETRIES:
            result.retries += 1
            await asyncio.sleep(float(detail or 1))
            continue
        result.failures.append(f"{sid}: {detail}")
        return None
    return None


async def _attempt(
    http: httpx.AsyncClient, sid: str, content: str, sse: bool, headers: dict[str, str]
) -> tuple[str, str]:
    """`("done", message_id)`, `("retry", seconds)` or `("failed", why)`."""
    try:
        if not sse:
            response = await http.post(
                f"/v1/sessions/{sid}/messages",
                json={"content": content},
                headers={**headers, "Accept": "application/json"},
            )
            if response.status_code == 503:
                return "retry", response.headers.get("retry-after", "1")
            if response.status_code != 200:
                return "failed", f"HTTP {response.status_code} {response.text[:200]}"
            return "done", str(response.json()["message_id"])
        async with http.stream(
            "POST", f"/v1/sessions/{sid}/messages", json={"content": content}, headers=headers
        ) as response:
            if response.status_code != 200:
                await response.aread()
                if response.status_code == 503:
                    return "retry", response.headers.get("retry-after", "1")
                return "failed", f"HTTP {response.status_code} {response.text[:200]}"
            event = None
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "done":
                    return "done", str(json.loads(line[6:])["message_id"])
                elif line.startswith("data: ") and event == "error":
                    data = json.loads(line[6:])
                    if data.get("code") == "unavailable":
                        return "retry", "1"
                    return "failed", f"error event {line[6:200]}"
        return "failed", "stream ended without done or error"
    except httpx.TransportError:  # e.g. a keep-alive connection closed under us: the key makes it safe
        return "retry", "0.5"
    except httpx.HTTPError as exc:
        return "failed", f"{type(exc).__name__}: {exc}"


async def run_load(
    bases: Sequence[str],
    api_key: str,
    project_id: str,
    *,
    sessions: int,
    turns: int,
    burst_sessions: int = 0,
    burst_size: int = 4,
) -> LoadResult:
    """`sessions` concurrent sessions x `turns` sequential turns (even sessions SSE, odd JSON), spread
    over `bases` round-robin; then `burst_sessions` of them get `burst_size` concurrent turns at once
    plus two concurrent requests sharing one Idempotency-Key (sent to different bases)."""
    result = LoadResult()
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
    clients = [
        httpx.AsyncClient(
            base_url=b, headers={"Authorization": f"Bearer {api_key}"}, timeout=300, limits=limits
        )
        for b in bases
    ]
    try:
        created = await asyncio.gather(
            *(
                clients[i % len(clients)].post("/v1/sessions", json={"project_id": project_id})
                for i in range(sessions)
            )
        )
        sids = [r.json()["id"] for r in created]
        result.expected = {sid: [] for sid in sids}

        async def converse(i: int, sid: str) -> None:
            for t in range(turns):
                content = f"session {i} turn {t}: what should I do next on billing?"
                result.expected[sid].append(content)
                await _turn(
                    clients[(i + t) % len(clients)], sid, content, sse=i % 2 == 0, key=None, result=result
                )

        started = time.perf_counter()
        await asyncio.gather(*(converse(i, sid) for i, sid in enumerate(sids)))
        await asyncio.gather(
            *(_burst(clients, i, sid, burst_size, result) for i, sid in enumerate(sids[:burst_sessions]))
        )
        result.elapsed = time.perf_counter() - started
    finally:
        for c in clients:
            await c.aclose()
    return result


async def _burst(clients: list[httpx.AsyncClient], i: int, sid: str, size: int, result: LoadResult) -> None:
    contents = [f"session {i} burst {b}: and then?" for b in range(size)]
    duplicate = f"session {i} duplicate: remind me of my goals"
    result.expected[sid] += [*contents, duplicate]
    key = f"dup-{uuid.uuid4().hex}"
    jobs = [
        _turn(clients[(i + b) % len(clients)], sid, c, sse=b % 2 == 0, key=None, result=result)
        for b, c in enumerate(contents)
    ]
    jobs += [
        _turn(clients[(i + d) % len(clients)], sid, duplicate, sse=d == 0, key=key, result=result)
        for d in range(2)
    ]
    answers = await asyncio.gather(*jobs)
    first, second = answers[-2], answers[-1]
    if first is not None and second is not None:
        result.replays.append((first, second))


async def verify_conversations(settings: Settings, expected: dict[str, list[str]]) -> list[str]:
    """Problems found in the stored sessions (empty when every conversation is intact)."""
    problems: list[str] = []
    db = Database.from_settings(settings)
    try:
        async with db.sessions() as s:
            rows = (
                await s.execute(
                    select(Message.session_id, Message.seq, Message.role, Message.content)
                    .where(Message.session_id.in_([uuid.UUID(k) for k in expected]))
                    .order_by(Message.session_id, Message.seq)
                )
            ).all()
    finally:
        await db.dispose()
    by_session: dict[str, list[Any]] = {sid: [] for sid in expected}
    for row in rows:
        by_session[str(row.session_id)].append(row)
    for sid, sent in expected.items():
        stored = by_session[sid]
        seqs = [m.seq for m in stored]
        if seqs != list(range(1, len(stored) + 1)):
            problems.append(f"{sid}: seq not contiguous: {seqs}")
        if [m.role for m in stored] != ["user", "assistant"] * len(sent):
            problems.append(f"{sid}: roles {[m.role for m in stored]} for {len(sent)} turns")
        users = [m.content for m in stored if m.role == "user"]
        if sorted(users) != sorted(sent):
            problems.append(f"{sid}: user messages differ (missing or duplicated): {sorted(users)}")
    return problems
