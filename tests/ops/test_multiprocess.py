"""Two real server processes on one database share their metrics (prometheus_client multiprocess
mode through PROMETHEUS_MULTIPROC_DIR), their per-user limits, and their background jobs."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from orrery.db.engine import Database
from orrery.db.models import Job
from orrery.demo.workspace import load_demo
from orrery.memory.digests import DIGEST_JOB
from tests.conftest import in_thread, settings_for

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
STARTUP_LIMIT_SECONDS = 90  # a bound on waiting for a process to listen, not a timing assertion


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def servers(env: dict[str, str], count: int) -> Iterator[list[str]]:
    """`count` processes of `uvicorn orrery.app.http:create_app`, started together; their base URLs."""
    ports = [_free_port() for _ in range(count)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "orrery.app.http:create_app", "--factory"]
            + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            cwd=ROOT,
            env=env,
        )
        for port in ports
    ]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_SECONDS
        for process, base in zip(processes, bases, strict=True):
            while not _listening(base):
                assert process.poll() is None, "a server process exited during startup"
                assert time.monotonic() < deadline, "a server did not start"
                time.sleep(0.2)
        yield bases
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _listening(base: str) -> bool:
    try:
        return httpx.get(f"{base}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _in_database(url: str, body: Callable[[Database], Awaitable[T]]) -> T:
    async def run() -> T:
        database = Database.from_settings(settings_for(url))
        try:
            return await body(database)
        finally:
            await database.dispose()

    return in_thread(asyncio.run, run())


async def _job_statuses(database: Database) -> list[str]:
    async with database.sessions() as s:
        # the summary refresh; the chat's digest waits for the chat to go quiet (its own tests)
        return list((await s.execute(select(Job.status).where(Job.kind != DIGEST_JOB))).scalars().all())


@pytest.mark.demo_db
def test_two_processes_share_metrics_limits_and_jobs(db_url: str, tmp_path: Path) -> None:
    demo = _in_database(db_url, lambda database: load_demo(database, "test-secret"))
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "ORRERY_ENV": "test",
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_LIMIT_TOKENS_PER_DAY": "50",  # the first offline turn uses more than that
        "ORRERY_PATTERN_REFRESH_MINUTES": "0.000001",
        "ORRERY_JOBS_POLL_SECONDS": "0.2",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }
    (tmp_path / "metrics").mkdir()
    headers = {"Authorization": f"Bearer {demo.api_key}", "Accept": "application/json"}
    with servers(env, 2) as (first, second):
        sid = httpx.post(f"{first}/v1/sessions", json={}, headers=headers).json()["id"]
        ok = httpx.post(
            f"{first}/v1/sessions/{sid}/messages", json={"content": "What next?"}, headers=headers, timeout=60
        )
        assert ok.status_code == 200, ok.text
        refused = httpx.post(
            f"{second}/v1/sessions/{sid}/messages", json={"content": "And then?"}, headers=headers, timeout=60
        )
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"

        for base in (first, second):  # either process answers for both
            samples = _samples(httpx.get(f"{base}/metrics").text)
            turns = [v for (name, labels), v in samples.items() if name == "orrery_turns_total"]
            assert turns == [1.0]
            assert (
                samples[("orrery_errors_total", frozenset({("agent", "-"), ("kind", "rate_limited")}))] == 1
            )

        deadline = time.monotonic() + STARTUP_LIMIT_SECONDS
        while (statuses := _in_database(db_url, _job_statuses)) != ["done"]:  # the queued summary refresh
            assert time.monotonic() < deadline, statuses
            time.sleep(0.2)
