"""`orrery chat`: the terminal chat."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import (
    err,
    out,
    run,
    with_db,
)
from orrery.config import get_settings

app = typer.Typer()


@app.command("chat")
def chat_command(
    once: Annotated[
        str | None, typer.Option("--once", help="Run one turn with this message and exit.")
    ] = None,
    session: Annotated[str | None, typer.Option(help="Continue this session.")] = None,
    user: Annotated[str | None, typer.Option(help="User id or email (default: the demo user).")] = None,
    project: Annotated[
        str | None, typer.Option(help="Project id (default: the user's first project).")
    ] = None,
    focus: Annotated[
        str | None, typer.Option(help="A name in the project, KIND:NAME or KIND:ID (task:<uuid>).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="Start with this agent.")] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Chat as the demo user, focused on the demo task.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --once: print the turn as JSON.")] = False,
) -> None:
    """Chat with the assistant in the terminal; `--once` runs a single turn for scripts."""
    from orrery.agents.credentials import credentials_report
    from orrery.cli.terminal import interactive, resolve_target, run_once

    report = credentials_report(get_settings())
    if report is not None and not report[0]:  # one line before the first turn fails on it
        err.print(f"[yellow]warning:[/] {report[1]}", highlight=False)

    async def body(db: Any) -> Any:
        target = await resolve_target(
            db, session=session, user=user, project=project, focus=focus, agent=agent, demo=demo
        )
        if once is None:
            await interactive(db, get_settings(), target, out)
            return None
        return await run_once(db, get_settings(), target, once, agent)

    result = run(lambda s: with_db(s, body))
    if result is None:
        return
    if as_json:
        print(json.dumps(result, default=str))
    else:
        if get_settings().model == "offline":  # once, on stderr: stdout is the reply alone
            from orrery.agents.offline import NOTICE

            err.print(NOTICE, style="dim", markup=False, highlight=False)
        out.print(result["reply"], markup=False, highlight=False)
