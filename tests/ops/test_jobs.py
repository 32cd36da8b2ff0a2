"""Durable background jobs: queued by one instance and run by another, taken over after a dead
worker's lease expires, claimed once each by concurrent workers, retried and logged on failure."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import select

from orrery.agents.orchestrator import Orchestrator
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import Job, UserSummary
from orrery.memory.digests import DIGEST_JOB
from orrery.ops.jobs import JobWorker, enqueue
from orrery.repo import chat
from orrery.repo.lineage import REFRESH_SUMMARY_JOB
from tests.support.db_events import count_statements, transactions_begun
from tests.support.models import streaming
from tests.support.serving import serving


async def jobs(db: Database) -> list[Job]:
    async with db.sessions() as s:
        stmt = select(Job).where(Job.kind != DIGEST_JOB).order_by(Job.created_at)  # digests: their own tests
        return list((await s.execute(stmt)).scalars().all())


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("noted")])


async def test_a_job_queued_by_one_instance_is_run_by_another(settings: Settings, demo: Any) -> None:
    every_turn = settings.model_copy(update={"pattern_refresh_minutes": 1e-6, "jobs_poll_seconds": 0.05})
    first = Database.from_settings(every_turn)
    try:
        async with first.transaction() as s:
            session = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
        queuing = Orchestrator(
            first, every_turn, lambda name, s: streaming(answer)
        )  # its worker never starts
        events = [e async for e in queuing.turn(demo.user_id, session.id, "what next?")]
        assert events[-1].type == "done"
        [queued] = await jobs(first)
        assert (queued.kind, queued.status, queued.payload) == (
            REFRESH_SUMMARY_JOB,
            "queued",
            {"user_id": str(demo.user_id), "model": "offline"},
        )

        app = create_app(every_turn)
        async with serving(app, demo.api_key):
            other = app.state.orchestrator.jobs
            for _ in range(400):  # the other instance's polling worker picks it up
                [job] = await jobs(first)
                if job.status != "queued" and job.status != "running":
                    break
                await asyncio.sleep(0.05)
        assert (job.status, job.locked_by, job.attempts, job.last_error) == ("done", other.name, 1, None)
        async with first.sessions() as s:
            summary = (
                await s.execute(select(UserSummary).where(UserSummary.user_id == demo.user_id))
            ).scalar_one()
        assert summary.updated_at >= job.created_at
    finally:
        await first.dispose()


async def test_a_job_left_running_by_a_killed_worker_runs_again_after_its_lease(
    db: Database, settings: Settings
) -> None:
    ran: list[dict[str, Any]] = []

    async def handler(payload: dict[str, Any]) -> None:
        ran.append(payload)

    async with db.transaction() as s:
        job = await enqueue(s, "probe", {"n": 1}, max_attempts=3)
        job.status, job.attempts, job.locked_by = "running", 1, "dead-host:4242:abcdef"
        job.locked_until = utcnow() + timedelta(minutes=5)
    worker = JobWorker(db, settings, {"probe": handler})
    assert await worker.run_due() == 0  # the lease still holds: nobody else may take it

    async with db.transaction() as s:
        (await s.get(Job, job.id)).locked_until = utcnow() - timedelta(seconds=1)  # type: ignore[union-attr]
    assert await worker.run_due() == 1
    [done] = await jobs(db)
    assert ran == [{"n": 1}] and (done.status, done.attempts, done.locked_by) == ("done", 2, worker.name)


async def test_concurrent_workers_claim_each_job_once(db: Database, settings: Settings) -> None:
    ran: list[int] = []

    async def handler(payload: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        ran.append(payload["n"])

    async with db.transaction() as s:
        for n in range(12):
            await enqueue(s, "probe", {"n": n}, max_attempts=1)
    second = Database.from_settings(settings)  # a second engine: another process's pool
    try:
        workers = [
            JobWorker(db, settings, {"probe": handler}),
            JobWorker(second, settings, {"probe": handler}),
        ]
        counts = await asyncio.gather(*(w.run_due() for w in workers))
    finally:
        await second.dispose()
    assert sum(counts) == 12 and sorted(ran) == list(range(12))
    assert {j.status for j in await jobs(db)} == {"done"}


async def test_an_idle_poll_is_one_statement_outside_any_transaction(
    db: Database, settings: Settings
) -> None:
    """Every worker polls every `jobs_poll_seconds`: with nothing due, one SELECT and no BEGIN."""
    with transactions_begun(db) as begun, count_statements(db) as statements:
        assert await JobWorker(db, settings, {}).run_due() == 0
    assert sum(begun) == 0
    assert len(statements) == 1 and statements[0].lstrip().startswith("SELECT")


async def test_a_failing_job_is_logged_retried_then_failed(
    db: Database, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(payload: dict[str, Any]) -> None:
        raise ConnectionError(f"provider unreachable for {payload['user']}")

    async with db.transaction() as s:
        job = await enqueue(s, "probe", {"user": "ada"}, max_attempts=2)
    worker = JobWorker(db, settings, {"probe": broken})
    with caplog.at_level(logging.WARNING, logger="orrery.jobs"):
        assert await worker.run_due() == 1  # tried once; the retry waits for its backoff
    [retry] = await jobs(db)
    assert (retry.status, retry.attempts) == ("queued", 1) and retry.run_after > utcnow()
    assert "ConnectionError: provider unreachable for ada" in (retry.last_error or "")
    warning = next(r for r in caplog.records if r.name == "orrery.jobs")
    assert (
        warning.levelno == logging.WARNING and warning.exc_info and "attempt 1 of 2" in warning.getMessage()
    )

    async with db.transaction() as s:
        (await s.get(Job, job.id)).run_after = utcnow()  # type: ignore[union-attr]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="orrery.jobs"):
        assert await worker.run_due() == 1
    [failed] = await jobs(db)
    assert (failed.status, failed.attempts) == ("failed", 2)
    assert [r.levelno for r in caplog.records if r.name == "orrery.jobs"] == [logging.ERROR]
    assert await worker.run_due() == 0  # failed jobs stay failed


async def test_unknown_job_kind_fails_loudly(
    db: Database, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async with db.transaction() as s:
        await enqueue(s, "nobody-handles-this", {}, max_attempts=1)
    with caplog.at_level(logging.ERROR, logger="orrery.jobs"):
        await JobWorker(db, settings, {}).run_due()
    [job] = await jobs(db)
    assert job.status == "failed" and "no handler for job kind" in (job.last_error or "")
    assert any("failed on its last attempt" in r.getMessage() for r in caplog.records)


async def test_orrery_chat_once_runs_the_jobs_its_turn_queued(
    db: Database, settings: Settings, demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old fire-and-forget refresh died with the CLI process; the queued job now runs before exit."""
    from typer.testing import CliRunner

    from orrery.cli import app as cli_app
    from orrery.config import get_settings
    from tests.conftest import in_thread

    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", settings.secret_key)
    monkeypatch.setenv("ORRERY_PATTERN_REFRESH_MINUTES", "0.000001")  # due at once
    get_settings.cache_clear()
    try:
        result = in_thread(CliRunner().invoke, cli_app, ["chat", "--demo", "--once", "What next?", "--json"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    [job] = await jobs(db)
    assert (job.kind, job.status, job.attempts) == (REFRESH_SUMMARY_JOB, "done", 1)


async def test_a_worker_stopped_mid_job_hands_it_back(db: Database, settings: Settings) -> None:
    started = asyncio.Event()

    async def slow(payload: dict[str, Any]) -> None:
        started.set()
        await asyncio.Event().wait()  # runs until the worker is stopped

    async with db.transaction() as s:
        await enqueue(s, "probe", {}, max_attempts=3)
    worker = JobWorker(db, settings, {"probe": slow})
    worker.start()
    await asyncio.wait_for(started.wait(), timeout=60)
    await worker.stop()
    [job] = await jobs(db)
    assert (job.status, job.attempts, job.locked_until) == ("queued", 0, None)


async def test_operators_list_and_retry_failed_jobs_from_the_cli(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from typer.testing import CliRunner

    from orrery.cli import app as cli_app
    from orrery.config import get_settings
    from tests.conftest import in_thread

    async def broken(payload: dict[str, Any]) -> None:
        raise RuntimeError("model key revoked")

    async with db.transaction() as s:
        job = await enqueue(s, "probe", {"user": "ada"}, max_attempts=1)
    await JobWorker(db, settings, {"probe": broken}).run_due()
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        listed = in_thread(runner.invoke, cli_app, ["jobs", "list", "--status", "failed", "--json"])
        table = in_thread(runner.invoke, cli_app, ["jobs", "list"])
        retried = in_thread(runner.invoke, cli_app, ["jobs", "retry", str(job.id)])
        again = in_thread(runner.invoke, cli_app, ["jobs", "retry", str(job.id)])
        bad = in_thread(runner.invoke, cli_app, ["jobs", "list", "--status", "stuck"])
    finally:
        get_settings.cache_clear()
    [row] = json.loads(listed.stdout)
    assert (row["id"], row["status"], row["attempts"]) == (str(job.id), "failed", 1)
    assert "RuntimeError: model key revoked" in row["last_error"]
    assert table.exit_code == 0 and "probe" in table.output and "failed" in table.output
    assert retried.exit_code == 0 and "queued again" in retried.output
    assert again.exit_code == 1 and "not found" in again.output  # only failed jobs are retried
    assert bad.exit_code == 2 and "unknown status" in bad.output
    [requeued] = await jobs(db)
    assert (requeued.status, requeued.attempts) == ("queued", 0)
