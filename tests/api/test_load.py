"""Load over HTTP against real server processes (offline model): no turn may fail, and afterwards the
database must hold every conversation intact (exact turns, contiguous `seq`, reply after message,
nothing stored twice). Runs on SQLite (one process) and PostgreSQL (one, and two processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.demo.workspace import load_demo
from tests.conftest import DIALECTS, settings_for
from tests.support.load import ROOT, run_load, server_process, verify_conversations


async def _demo(settings: Settings) -> Any:
    db = Database.from_settings(settings)
    try:
        return await load_demo(db, settings.secret_key)
    finally:
        await db.dispose()


@pytest.mark.demo_db
async def test_thirty_concurrent_sessions_two_turns_each(db_url: str) -> None:
    settings = settings_for(db_url)
    demo = await _demo(settings)
    workers = 2 if settings.dialect == "postgresql" else 1  # `orrery serve --workers 2`
    with server_process(db_url, settings.secret_key, workers=workers, forked=True) as base:
        result = await run_load(
            [base], demo.api_key, str(demo.project_id), sessions=30, turns=2, burst_sessions=3
        )
    assert result.failures == []
    assert result.turns == 30 * 2 + 3 * 6
    assert all(first == second for first, second in result.replays) and len(result.replays) == 3
    assert await verify_conversations(settings, result.expected) == []


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="several processes need PostgreSQL")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.demo_db
async def test_two_server_processes_on_one_postgresql(db_url: str) -> None:
    settings = settings_for(db_url)
    demo = await _demo(settings)
    with (
        server_process(db_url, settings.secret_key, forked=True) as first,
        server_process(db_url, settings.secret_key, forked=True) as second,
    ):
        result = await run_load(
            [first, second], demo.api_key, str(demo.project_id), sessions=10, turns=2, burst_sessions=10
        )
    assert result.failures == []
    assert result.turns == 10 * 2 + 10 * 6
    # the same Idempotency-Key sent to both processes at once ran one turn: the second replays it
    assert len(result.replays) == 10 and all(first == second for first, second in result.replays)
    assert await verify_conversations(settings, result.expected) == []


@pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite only")
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_workers_on_sqlite_are_refused_with_a_message(db_url: str, tmp_path: Any) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATABASE_URL": db_url, "ORRERY_SECRET_KEY": "x"}
    command = [sys.executable, "-m", "orrery", "serve", "--workers", "2"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--workers needs PostgreSQL" in done.stdout + done.stderr
