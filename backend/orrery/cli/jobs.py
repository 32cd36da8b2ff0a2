"""`orrery jobs`: the durable background-job queue for operators — list jobs, retry a failed one."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from orrery.cli.common import out, run, with_db

jobs_app = typer.Typer(help="Background jobs: list, retry failed ones.", no_args_is_help=True)
STATUSES = ("queued", "running", "done", "failed")


@jobs_app.command("list")
def jobs_list(
    status: Annotated[str | None, typer.Option(help="queued, running, done or failed.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Newest jobs first, with attempts, the worker holding them and the last error's last line."""
    from sqlalchemy import select

    from orrery.db.models import Job

    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")

    async def body(db: Any) -> list[dict[str, Any]]:
        query = select(Job).order_by(Job.created_at.desc()).limit(limit)
        if status is not None:
            query = query.where(Job.status == status)
        async with db.sessions() as session:
            return [_row(j) for j in (await session.execute(query)).scalars().all()]

    rows = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    table = Table(show_header=True)
    for column in ("id", "kind", "status", "attempts", "run after", "worker", "last error"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["id"],
            r["kind"],
            r["status"],
            f"{r['attempts']}/{r['max_attempts']}",
            r["run_after"][:19],
            r["locked_by"] or "-",
            (r["last_error"] or "-").strip().splitlines()[-1][:80],
        )
    out.print(table if rows else "no jobs")


@jobs_app.command("retry")
def jobs_retry(job_id: Annotated[str, typer.Argument(help="A failed job's id.")]) -> None:
    """Queue a failed job again with fresh attempts (after fixing what made it fail)."""
    from sqlalchemy import update
    from sqlalchemy.exc import IntegrityError

    from orrery.db.base import utcnow
    from orrery.db.models import Job
    from orrery.errors import ConflictError, NotFoundError
    from orrery.repo.scope import as_uuid

    async def body(db: Any) -> None:
        try:
            async with db.transaction() as session:
                result = await session.execute(
                    update(Job)
                    .where(Job.id == as_uuid(job_id, "failed job"), Job.status == "failed")
                    .values(
                        status="queued", attempts=0, run_after=utcnow(), locked_by=None, updated_at=utcnow()
                    )
                )
                if result.rowcount == 0:
                    raise NotFoundError("failed job", job_id)
        except IntegrityError as exc:  # its dedupe_key: the same work is pending as another job
            raise ConflictError(
                "a job for the same work is already queued or running; nothing to retry"
            ) from exc

    run(lambda s: with_db(s, body))
    out.print(f"job {job_id} queued again")


def _row(job: Any) -> dict[str, Any]:
    return {
        "id": str(job.id),
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "run_after": job.run_after.isoformat(),
        "locked_by": job.locked_by,
        "last_error": job.last_error,
        "payload": job.payload,
        "dedupe_key": job.dedupe_key,
    }
