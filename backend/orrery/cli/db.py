"""`orrery db`: apply, revert and inspect migrations."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from orrery.cli.common import (
    out,
    run,
    where,
    with_db,
)
from orrery.config import get_settings

db_app = typer.Typer(help="Database migrations.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    from orrery.db.migrations import upgrade

    settings = get_settings()
    upgrade(settings.database_url, revision)
    out.print(f"database migrated to {revision} ({where(settings)})")


@db_app.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision, e.g. 'base'.")]) -> None:
    """Revert migrations down to REVISION."""
    from orrery.db.migrations import downgrade

    settings = get_settings()
    downgrade(settings.database_url, revision)
    out.print(f"database downgraded to {revision} ({where(settings)})")


@db_app.command("current")
def db_current() -> None:
    """Show the database's revision and whether it is up to date."""
    from orrery.db.migrations import current_revision, head_revision

    async def body(db: Any) -> str | None:
        return await current_revision(db.engine)

    current = run(lambda s: with_db(s, body, check=False))
    head = head_revision()
    state = "up to date" if current == head else "needs `orrery db upgrade`"
    out.print(f"current: {current or '(none)'}  head: {head}  -> {state}")
    if current != head:
        raise typer.Exit(1)
