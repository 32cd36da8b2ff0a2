"""`orrery chat`: talk to the assistant in the terminal (or run one turn for scripts with `--once`).

Slash commands: `/context` (the receipt of the last turn), `/focus KIND:ID` (or `/focus none`),
`/agent NAME`, `/strategy NAME`, `/quit`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from backend.config import Settings
from backend.db.engine import Database
from backend.errors import OrreryError, ValidationError

DEMO_EMAIL = "maya@demo.orrery.dev"


@dataclass
class ChatTarget:
    """Who is chatting, in which session."""

    user_id: uuid.UUID
    session_id: uuid.UUID


async def resolve_target(
    db: Database,
    *,
    session: str | None,
    user: str | None,
    project: str | None,
    focus: str | None,
    agent: str | None,
    demo: bool,
) -> ChatTarget:
    """An existing session, or a new one for the user (the demo user and task with `demo`)."""
    from sqlalchemy import select

    from backend.db.models import ChatSession, Project
    from backend.demo.workspace import focus_ids
    from backend.repo import chat, identity
    from backend.repo.scope import as_uuid

    async with db.transaction() as s:
        if session is not None:
            record = await s.get(ChatSession, as_uuid(session, "session"))
            if record is None:
                from backend.errors import NotFoundError

                raise NotFoundError("session", session)
            return ChatTarget(record.user_id, record.id)
        if user is None:
            who = await identity.find_user_by_email(s, DEMO_EMAIL)
        elif "@" in user:
            who = await identity.find_user_by_email(s, user)
        else:
            who = await identity.get_user(s, user)
        if who is None:
            raise ValidationError("no user: pass --user, or load the demo with `orrery demo load`")
        project_id = as_uuid(project, "project") if project else None
        if project_id is None:
            projects = await identity.list_projects(s, who.id)
            project_id = projects[-1].id if projects else None
        focus_kind = focus_id = None
        if focus:
            focus_kind, _, focus_id = focus.partition(":")
            if not focus_id:
                raise ValidationError("--focus must look like KIND:ID, e.g. task:<uuid>")
        elif demo and project_id is not None:
            name = (await s.execute(select(Project.name).where(Project.id == project_id))).scalar_one()
            if name == "Atlas 2.0 Launch":
                focus_kind, focus_id = "task", str((await focus_ids(s, project_id))["task"])
        record = await chat.create_session(
            s, who.id, project_id=project_id, focus_kind=focus_kind, focus_id=focus_id, active_agent=agent
        )
        return ChatTarget(who.id, record.id)


async def run_once(
    db: Database, settings: Settings, target: ChatTarget, message: str, agent: str | None
) -> dict[str, Any]:
    """One turn; the JSON document `orrery chat --once --json` prints."""
    from backend.agents.orchestrator import Orchestrator

    events = [
        e
        async for e in Orchestrator(db, settings).turn(
            target.user_id, target.session_id, message, agent=agent
        )
    ]
    last = events[-1]
    if last.type == "error":
        raise ValidationError(f"the model failed: {last.data['message']} (run the same command to retry)")
    return {
        "session_id": str(target.session_id),
        "agent": last.data["agent"],
        "reply": last.data["reply"],
        "tool_calls": last.data["tool_calls"],
        "usage": last.data["usage"],
        "handoff": last.data["handoff"],
    }


async def interactive(db: Database, settings: Settings, target: ChatTarget, console: Console) -> None:
    """The terminal chat loop."""
    from backend.agents.orchestrator import Orchestrator

    orchestrator = Orchestrator(db, settings)
    state: dict[str, Any] = {"receipt": None, "agent": None}
    console.print(
        f"[dim]session {target.session_id} · model {settings.model} · "
        "/context /focus /agent /strategy /quit[/]"
    )
    while True:
        try:
            line = (await asyncio.to_thread(console.input, "[bold cyan]you ›[/] ")).strip()
        except (EOFError, KeyboardInterrupt):
            return
        if line in ("/quit", "/exit", "/q"):
            return
        if line.startswith("/"):
            try:
                await _command(db, target, line, state, console)
            except (OrreryError, ValueError) as exc:
                console.print(f"[red]{exc}[/]")
        elif line:
            console.print("[bold magenta]orrery ›[/] ", end="")
            async for event in orchestrator.turn(
                target.user_id, target.session_id, line, agent=state["agent"]
            ):
                _render(console, event, state)
            state["agent"] = None


def _render(console: Console, event: Any, state: dict[str, Any]) -> None:
    if event.type == "text":
        console.print(event.data["delta"], end="", markup=False, highlight=False)
    elif event.type == "tool_call":
        console.print(f"\n[dim]→ {event.data['name']}({json.dumps(event.data['args'])})[/]")
    elif event.type == "context":
        state["receipt"] = event.data
    elif event.type == "error":
        console.print(f"\n[red]model error: {event.data['message']} — send the message again to retry[/]")
    elif event.type == "done":
        console.print(f"\n[dim]({event.data['agent']} · {event.data['latency_ms']} ms)[/]")


async def _command(
    db: Database, target: ChatTarget, line: str, state: dict[str, Any], console: Console
) -> None:
    """`/context`, `/agent NAME`, `/strategy NAME`, `/focus KIND:ID|none`."""
    from backend.agents.definitions import get_agent
    from backend.memory.scoping import get_strategy
    from backend.repo import chat

    command, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if command == "context":
        _show_receipt(console, state["receipt"])
        return
    if command == "agent":
        state["agent"] = get_agent(arg).id
        console.print(f"[dim]the next turn goes to the {state['agent']}[/]")
        return
    if command not in ("strategy", "focus"):
        console.print("[yellow]commands: /context /focus KIND:ID /agent NAME /strategy NAME /quit[/]")
        return
    async with db.transaction() as s:
        record = await chat.get_session(s, target.user_id, target.session_id)
        if command == "strategy":
            get_strategy(arg)
            record.scoping_strategy = arg
        else:
            kind, _, ident = arg.partition(":")
            if kind in ("", "none"):
                record.focus_kind, record.focus_id = None, None
            else:
                if record.project_id is None:
                    raise ValidationError("this session has no project to focus in")
                await chat.check_focus(s, target.user_id, record.project_id, kind, ident)
                record.focus_kind, record.focus_id = kind, uuid.UUID(ident)
    console.print(f"[dim]{command}: {arg or 'none'}[/]")


def _show_receipt(console: Console, receipt: dict[str, Any] | None) -> None:
    if receipt is None:
        console.print("[dim]no turn yet[/]")
        return
    table = Table(title="last turn's context")
    table.add_column("what")
    table.add_column("value")
    for key, value in receipt.items():
        if key not in ("receipt", "system_prompt", "messages"):
            table.add_row(key, json.dumps(value, default=str))
    for section in (receipt.get("receipt") or {}).get("sections", []):  # tokens against budget
        table.add_row(
            section.get("title") or section["name"], f"{section['tokens']} / {section['budget']} tokens"
        )
    console.print(table)
