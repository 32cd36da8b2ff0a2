"""The pattern analyst's refresh is due by the person's summary age, not one session's length, and is
queued once per person however many of their sessions (or processes) reply at the same time."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import select, update
from typer.testing import CliRunner

from orrery.agents.orchestrator import Orchestrator
from orrery.agents.patterns import refresh_due
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import Job, UserSummary
from orrery.memory.digests import DIGEST_JOB
from orrery.ops.jobs import enqueue_once
from orrery.repo import chat
from orrery.repo.lineage import REFRESH_SUMMARY_JOB
from tests.support.models import streaming


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A chat reply, or (the analyst) a summary with one new pattern."""
    if info.output_tools:
        args = {"patterns": ["Plans in short bursts"], "wins": [], "struggles": []}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
    return ModelResponse(parts=[TextPart("noted")])


async def _jobs(db: Database) -> list[Job]:
    async with db.sessions() as s:
        stmt = select(Job).where(Job.kind != DIGEST_JOB).order_by(Job.created_at)  # digests: their own tests
        return list((await s.execute(stmt)).scalars().all())


async def _age_summary(db: Database, user_id: Any, minutes: float) -> None:
    async with db.transaction() as s:
        await s.execute(
            update(UserSummary)
            .where(UserSummary.user_id == user_id)
            .values(updated_at=utcnow() - timedelta(minutes=minutes))
        )


async def _turn_in_new_session(orch: Orchestrator, db: Database, demo: Any, text: str) -> None:
    async with db.transaction() as s:
        record = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
    events = [e async for e in orch.turn(demo.user_id, record.id, text)]
    assert events[-1].type == "done"


def test_a_refresh_is_due_when_the_summary_is_older_than_the_setting_or_missing(settings: Settings) -> None:
    every = settings.model_copy(update={"pattern_refresh_minutes": 10})
    now = utcnow()
    assert refresh_due(every, None, now)
    assert refresh_due(every, now - timedelta(minutes=10), now)
    assert not refresh_due(every, now - timedelta(minutes=9), now)
    off = settings.model_copy(update={"pattern_refresh_minutes": 0})
    assert not refresh_due(off, None, now)


async def test_short_sessions_queue_one_refresh_per_person_once_the_summary_is_due(
    db: Database, settings: Settings, demo: Any
) -> None:
    """Three one-turn sessions at once (the old rule, every tenth reply of a session, never ran for
    them) queue one job; once it ran, the fresh summary queues nothing."""
    every = settings.model_copy(update={"pattern_refresh_minutes": 10})
    orch = Orchestrator(db, every, lambda name, s: streaming(respond))  # its worker never starts
    await _age_summary(db, demo.user_id, 0)  # refreshed now: the demo template's stamp is as old as the run
    await _turn_in_new_session(orch, db, demo, "What next?")
    assert await _jobs(db) == []  # the summary is fresh

    await _age_summary(db, demo.user_id, 11)
    await asyncio.gather(*(_turn_in_new_session(orch, db, demo, f"Question {i}?") for i in range(3)))
    await _turn_in_new_session(orch, db, demo, "And one more?")
    [job] = await _jobs(db)
    key = f"summary:{demo.user_id}"
    assert (job.kind, job.status, job.dedupe_key) == (REFRESH_SUMMARY_JOB, "queued", key)

    assert await orch.jobs.run_due() == 1
    async with db.sessions() as s:
        summary = await s.get(UserSummary, demo.user_id)
    assert summary is not None and summary.patterns[0] == "Plans in short bursts"
    await _turn_in_new_session(orch, db, demo, "Thanks?")
    assert [j.status for j in await _jobs(db)] == ["done"]  # refreshed just now: not due


async def test_a_key_is_queued_again_only_once_its_job_finished(db: Database, settings: Settings) -> None:
    async def once() -> bool:
        async with db.statement() as s:
            return await enqueue_once(s, "probe", {}, key="probe:1", max_attempts=1)

    assert await once() is True
    assert await once() is False
    async with db.transaction() as s:
        await s.execute(update(Job).values(status="running"))
    assert await once() is False
    async with db.transaction() as s:
        await s.execute(update(Job).values(status="done"))
    assert await once() is True
    assert sorted(j.status for j in await _jobs(db)) == ["done", "queued"]


async def test_retrying_a_failed_job_whose_work_is_pending_again_is_refused_from_the_cli(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orrery.cli import app as cli_app
    from orrery.config import get_settings
    from tests.conftest import in_thread

    async with db.statement() as s:
        await enqueue_once(s, "probe", {}, key="probe:1", max_attempts=1)
    async with db.transaction() as s:
        await s.execute(update(Job).values(status="failed"))
    async with db.statement() as s:
        await enqueue_once(s, "probe", {}, key="probe:1", max_attempts=1)
    failed = next(j for j in await _jobs(db) if j.status == "failed")
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    try:
        result = in_thread(CliRunner().invoke, cli_app, ["jobs", "retry", str(failed.id)])
        listed = in_thread(CliRunner().invoke, cli_app, ["jobs", "list", "--json"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1 and "already queued or running" in result.output
    assert {(r["status"], r["dedupe_key"]) for r in json.loads(listed.stdout)} == {
        ("failed", "probe:1"),
        ("queued", "probe:1"),
    }
    assert sorted(j.status for j in await _jobs(db)) == ["failed", "queued"]  # nothing changed


async def test_a_key_that_failed_for_good_waits_out_the_interval(db: Database) -> None:
    async def once(within: timedelta | None) -> bool:
        async with db.statement() as s:
            return await enqueue_once(
                s, "probe", {"n": 1}, key="probe:1", max_attempts=1, failed_within=within
            )

    assert await once(timedelta(minutes=10)) is True  # nothing failed: queued as before
    async with db.transaction() as s:
        await s.execute(update(Job).values(status="failed", updated_at=utcnow() - timedelta(minutes=5)))
    assert await once(timedelta(minutes=10)) is False  # failed 5 minutes ago
    assert await once(timedelta(minutes=2)) is True  # a shorter interval has passed
    [queued] = [j for j in await _jobs(db) if j.status == "queued"]
    assert (queued.kind, queued.payload, queued.max_attempts, queued.attempts) == ("probe", {"n": 1}, 1, 0)
    assert queued.run_after <= utcnow() and queued.created_at <= queued.updated_at <= utcnow()  # defaults


async def test_an_analyst_that_keeps_failing_is_queued_once_per_interval(
    db: Database, settings: Settings, demo: Any
) -> None:
    """A summary the analyst cannot refresh stays due; after its job failed for good, replies queue
    nothing more until the refresh interval has passed since the failure."""

    def analyst_fails(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:
            raise RuntimeError("the analyst's model is down")
        return ModelResponse(parts=[TextPart("noted")])

    every = settings.model_copy(update={"pattern_refresh_minutes": 10, "jobs_max_attempts": 1})
    orch = Orchestrator(db, every, lambda name, s: streaming(analyst_fails))
    await _age_summary(db, demo.user_id, 11)
    await _turn_in_new_session(orch, db, demo, "What next?")
    await orch.jobs.run_due()
    assert [j.status for j in await _jobs(db)] == ["failed"]
    for text in ("And now?", "Still there?"):
        await _turn_in_new_session(orch, db, demo, text)
    assert [j.status for j in await _jobs(db)] == ["failed"]  # due, but it failed just now

    async with db.transaction() as s:
        await s.execute(update(Job).values(updated_at=utcnow() - timedelta(minutes=11)))
    await _turn_in_new_session(orch, db, demo, "Try again?")
    assert sorted(j.status for j in await _jobs(db)) == ["failed", "queued"]
