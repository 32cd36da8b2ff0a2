"""`orrery usage`: a user's tokens and cost by day and agent (what `GET /v1/me/usage` returns)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from orrery.cli.common import out, resolve_user, run, with_db

app = typer.Typer()


@app.command("usage")
def usage(
    user: Annotated[str, typer.Option("--user", "--email", help="The user (email or id).")],
    days: Annotated[int, typer.Option(min=1, max=366, help="How many UTC days back, today included.")] = 30,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Model tokens and cost per day and agent; cost is '-' for models without a price (offline)."""
    from orrery.repo.usage import usage_by_day

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            who = await resolve_user(session, user)
            return await usage_by_day(session, who.id, days)

    rows = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps([{**r.__dict__, "day": r.day.isoformat()} for r in rows], indent=1))
        return
    table = Table(show_header=True)
    for column in ("day", "agent", "turns", "tokens in", "tokens out", "cost (USD)"):
        table.add_column(column, justify="left" if column in ("day", "agent") else "right")
    for r in rows:
        cost = f"{r.cost_usd:.4f}" if r.cost_usd is not None else "-"
        table.add_row(
            r.day.isoformat(), r.agent or "-", str(r.turns), str(r.input_tokens), str(r.output_tokens), cost
        )
    out.print(table if rows else f"no usage in the last {days} days")
