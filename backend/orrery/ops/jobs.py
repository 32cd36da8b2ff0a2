"""Durable background jobs in the database: enqueue in a transaction, claim atomically, run, retry.

Any worker process can run any job. A claim is one `UPDATE ... WHERE id = (SELECT ... FOR UPDATE
SKIP LOCKED)` on PostgreSQL (SQLite serialises writers, so the same statement is atomic there) and
leases the job until `locked_until`: a job still `running` after its lease (its worker was killed)
is claimed again. Failures are logged and retried with exponential backoff until `max_attempts`,
then marked `failed` — never swallowed: a failure of a kind the worker was told is self-explaining
(`brief`: a provider that is down) is one log line, any other carries its traceback; the job's
`last_error` keeps the traceback either way. `requeue_failed` gives failed work of a kind another
run (called when the service it needs answers again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.instrumentation.utils import suppress_instrumentation
from sqlalchemy import and_, delete, exists, literal, literal_column, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.db.base import conflict_insert, utcnow
from orrery.db.engine import Database
from orrery.db.failures import as_unavailable, outage_line
from orrery.db.models import Job

log = logging.getLogger("orrery.jobs")
JobHandler = Callable[[dict[str, Any]], Awaitable[None]]
MAX_BACKOFF_SECONDS = 600
KEEP_DONE = timedelta(days=7)
PRUNE_EVERY_SECONDS = 3600.0


async def enqueue(session: AsyncSession, kind: str, payload: dict[str, Any], *, max_attempts: int) -> Job:
    """Add a job inside the caller's transaction: it exists exactly when that transaction commits."""
    job = Job(kind=kind, payload=payload, max_attempts=max_attempts)
    session.add(job)
    await session.flush()
    return job


async def enqueue_once(
    session: AsyncSession,
    kind: str,
    payload: dict[str, Any],
    *,
    key: str,
    max_attempts: int,
    failed_within: timedelta | None = None,
    run_after: datetime | None = None,
) -> bool:
    """Add a job unless one with the same `key` is queued or running, or (with `failed_within`)
    failed for good less than that long ago: work that keeps failing (a model that errors every
    time) is not queued again on every trigger. One statement, so in any session: the unique
    index `uq_jobs_pending_dedupe_key` decides, across processes too; whether it was added.
    `run_after`: not before then (a chat's digest waits until the chat is quiet)."""
    values = {"kind": kind, "payload": payload, "max_attempts": max_attempts, "dedupe_key": key}
    if run_after is not None:
        values["run_after"] = run_after
    insert = conflict_insert(session.get_bind().dialect.name, Job)
    if failed_within is None:
        statement = insert.values(**values)
    else:
        failed = exists().where(  # a literal status: `ix_jobs_failed_dedupe_key`'s own condition
            Job.dedupe_key == key,
            Job.status == literal_column("'failed'"),
            Job.updated_at > utcnow() - failed_within,
        )
        row = select(*(literal(v, Job.__table__.c[k].type) for k, v in values.items())).where(~failed)
        statement = insert.from_select(list(values), row)
    added = await session.execute(statement.on_conflict_do_nothing().returning(Job.id))
    return added.first() is not None


class RunLater(Exception):  # noqa: N818 (a request, not an error)
    """Raised by a handler whose work is not due yet (a chat still talking): the job is queued
    again for `at`, the attempt not counted, under its own key (no other job can take its place)."""

    def __init__(self, at: datetime) -> None:
        super().__init__(f"not due before {at.isoformat()}")
        self.at = at


@dataclass(frozen=True)
class ClaimedJob:
    """A job this worker holds the lease on."""

    id: uuid.UUID
    kind: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int


def _backoff(attempts: int) -> float:
    return float(min(MAX_BACKOFF_SECONDS, 2**attempts))


async def requeue_failed(db: Database, kind: str) -> int:
    """Queue every job of `kind` that failed for good again, with its attempts reset; how many.
    One statement: a no-op (nothing matches) costs one round trip."""
    now = utcnow()
    async with db.transaction() as s:
        requeued = await s.execute(
            update(Job)
            .where(Job.kind == kind, Job.status == "failed")
            .values(status="queued", attempts=0, run_after=now, locked_until=None, updated_at=now)
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        return len(requeued.all())


class JobWorker:
    """Runs due jobs with the handlers it knows; `start()` polls in the background, `wake()` skips the
    wait after a local enqueue, `run_due()` drains what is due now (tests, CLI exit). `brief`:
    exception types whose message says what failed (a provider down), logged as one line."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        handlers: dict[str, JobHandler],
        brief: tuple[type[Exception], ...] = (),
    ) -> None:
        self.db = db
        self.settings = settings
        self.handlers = handlers
        self.brief = brief
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._pruned_at = 0.0

    def start(self) -> None:
        """Poll for due jobs until `stop()`."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=f"orrery-jobs-{self.name}")

    async def stop(self) -> None:
        """Stop polling; a job in flight is cancelled and its lease lets another worker retry it."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def wake(self) -> None:
        """Look for work now instead of at the next poll."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            try:
                await self.run_due()
                await self._prune()
            except Exception as exc:  # the database went away, say: log it and keep polling
                if as_unavailable(exc) is None:
                    log.exception("background job worker pass failed; retrying at the next poll")
                else:  # an outage: one line a poll, not a traceback
                    log.warning(
                        "background job worker pass failed (%s); retrying at the next poll", outage_line(exc)
                    )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.jobs_poll_seconds)
            self._wake.clear()

    async def run_due(self) -> int:
        """Claim and run jobs until none is due; returns how many ran."""
        ran = 0
        while (job := await self.claim()) is not None:
            await self._run(job)
            ran += 1
        return ran

    def _due(self) -> Any:
        now = utcnow()
        return or_(
            and_(Job.status == "queued", Job.run_after <= now),
            and_(Job.status == "running", Job.locked_until < now),
        )

    async def claim(self) -> ClaimedJob | None:
        """Lease the oldest due job, or `None`; a cheap read first, one statement outside any
        transaction, so an idle poll writes nothing and costs one round trip (not BEGIN, SELECT,
        ROLLBACK every `jobs_poll_seconds` in every worker)."""
        with suppress_instrumentation():  # idle polls every few seconds are not worth a trace each
            async with self.db.single() as s:
                if (await s.execute(select(Job.id).where(self._due()).limit(1))).first() is None:
                    return None
        async with self.db.transaction() as s:
            await self._fail_exhausted(s)
            pick = select(Job.id).where(self._due()).order_by(Job.run_after).limit(1)
            if self.db.dialect == "postgresql":
                pick = pick.with_for_update(skip_locked=True)
            now = utcnow()
            row = (
                await s.execute(
                    update(Job)
                    .where(Job.id == pick.scalar_subquery())
                    .values(
                        status="running",
                        attempts=Job.attempts + 1,
                        locked_until=now + timedelta(seconds=self.settings.jobs_lease_seconds),
                        locked_by=self.name,
                        updated_at=now,
                    )
                    .returning(Job.id, Job.kind, Job.payload, Job.attempts, Job.max_attempts)
                    .execution_options(synchronize_session=False)
                )
            ).first()
        return ClaimedJob(*row) if row is not None else None

    async def _fail_exhausted(self, s: AsyncSession) -> None:
        """A job whose lease ran out on its last attempt (its worker kept dying) is failed, not retried."""
        now = utcnow()
        failed = await s.execute(
            update(Job)
            .where(Job.status == "running", Job.locked_until < now, Job.attempts >= Job.max_attempts)
            .values(status="failed", last_error="lease expired on the last attempt", updated_at=now)
            .returning(Job.id, Job.kind)
            .execution_options(synchronize_session=False)
        )
        for job_id, kind in failed.all():
            log.error("job %s (%s) failed: its worker stopped on the last attempt", job_id, kind)

    async def _run(self, job: ClaimedJob) -> None:
        from orrery.ops import metrics

        handler = self.handlers.get(job.kind)
        started = time.perf_counter()
        try:
            if handler is None:
                raise LookupError(f"no handler for job kind {job.kind!r}")
            await handler(job.payload)
        except asyncio.CancelledError:  # shutdown: hand the job back at once instead of at lease expiry
            await asyncio.shield(self._release(job))
            raise
        except RunLater as later:
            await self._finish(
                job, status="queued", last_error=None, run_after=later.at, attempts=job.attempts - 1
            )
            return
        except Exception as exc:
            metrics.JOBS.labels(kind=job.kind, outcome="error").inc()
            await self._failed(job, exc)
            return
        metrics.JOBS.labels(kind=job.kind, outcome="ok").inc()
        log.info("job %s (%s) done in %.0f ms", job.id, job.kind, (time.perf_counter() - started) * 1000)
        await self._finish(job, status="done", last_error=None)

    async def _failed(self, job: ClaimedJob, exc: Exception) -> None:
        detail = "".join(traceback.format_exception(exc))
        brief = isinstance(exc, self.brief)
        why, trace = (f": {exc}", None) if brief else ("", exc)
        if job.attempts < job.max_attempts:
            delay = _backoff(job.attempts)
            log.warning(
                "job %s (%s) failed on attempt %d of %d%s; retrying in %.0f s",
                job.id,
                job.kind,
                job.attempts,
                job.max_attempts,
                why,
                delay,
                exc_info=trace,
            )
            await self._finish(
                job, status="queued", last_error=detail, run_after=utcnow() + timedelta(seconds=delay)
            )
        else:
            log.error(
                "job %s (%s) failed on its last attempt (%d)%s",
                job.id,
                job.kind,
                job.attempts,
                why,
                exc_info=trace,
            )
            await self._finish(job, status="failed", last_error=detail)

    async def _finish(self, job: ClaimedJob, *, status: str, last_error: str | None, **values: Any) -> None:
        """Record the outcome unless the lease was lost (another worker took the job over)."""
        async with self.db.transaction() as s:
            result = await s.execute(
                update(Job)
                .where(Job.id == job.id, Job.locked_by == self.name, Job.attempts == job.attempts)
                .values(
                    status=status, last_error=last_error, locked_until=None, updated_at=utcnow(), **values
                )
                .execution_options(synchronize_session=False)
            )
        if result.rowcount == 0:  # type: ignore[attr-defined]
            log.warning(
                "job %s finished after its lease was taken over; outcome %s not recorded", job.id, status
            )

    async def _release(self, job: ClaimedJob) -> None:
        """Put a job this worker was stopped in the middle of back in the queue, attempt not counted."""
        async with self.db.transaction() as s:
            await s.execute(
                update(Job)
                .where(Job.id == job.id, Job.locked_by == self.name, Job.attempts == job.attempts)
                .values(status="queued", attempts=Job.attempts - 1, locked_until=None, updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )
        log.info("job %s (%s) handed back to the queue at shutdown", job.id, job.kind)

    async def _prune(self) -> None:
        """Now and then, forget jobs that finished more than a week ago."""
        if time.monotonic() - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = time.monotonic()
        async with self.db.transaction() as s:
            await s.execute(delete(Job).where(Job.status == "done", Job.updated_at < utcnow() - KEEP_DONE))
