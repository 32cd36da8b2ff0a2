"""`orrery chat`: talk to the assistant in the terminal (or run one turn for scripts with `--once`).

Slash commands: `/context` (the receipt table of what the next turn will see), `/focus NAME` (or
`KIND:NAME`, `KIND:ID`, `/focus none`), `/agent NAME` (the session's agent from the next turn on),
`/strategy NAME`, `/quit`.
Replies render as markdown; Ctrl-C at the prompt exits at once; pydantic-ai's banner stays hidden.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.errors import OrreryError, ValidationError

if TYPE_CHECKING:  # imported in the chat loop: the orchestrator's imports are heavy
    from orrery.agents.orchestrator import Orchestrator

DEMO_EMAIL = "maya@demo.orrery.dev"


@dataclass
class ChatTarget:
    """Who is chatting, in which session."""

    user_id: uuid.UUID
    session_id: uuid.UUID


async def _user(s: Any, user: str | None) -> Any:
    """`--user` (an id or email), or the demo user without it."""
    from orrery.repo import identity

    if user is None:
        who = await identity.find_user_by_email(s, DEMO_EMAIL)
    elif "@" in user:
        who = await identity.find_user_by_email(s, user)
    else:
        who = await identity.get_user(s, user)
    if who is None:
        raise ValidationError("no user: pass --user, or load the demo with `orrery demo load`")
    return who


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

    from orrery.cli.chat_focus import resolve_focus
    from orrery.db.models import ChatSession, Project
    from orrery.demo.workspace import focus_ids
    from orrery.repo import chat
    from orrery.repo.scope import as_uuid

    async with db.transaction() as s:
        if session is not None:
            record = await s.get(ChatSession, as_uuid(session, "session"))
            if record is None:
                from orrery.errors import NotFoundError

                raise NotFoundError("session", session)
            if user is not None and (await _user(s, user)).id != record.user_id:
                raise ValidationError(  # never a turn written as someone other than --user
                    f"session {session} is not {user}'s: leave out --user to continue it as its "
                    f"owner, or pick one of theirs (`orrery sessions list --user {user}`)"
                )
            return ChatTarget(record.user_id, record.id)
        who = await _user(s, user)
        project_id = as_uuid(project, "project") if project else None
        if project_id is None:
            project_id = await _default_project(s, who.id, demo)
        focus_kind: str | None = None
        focus_id: uuid.UUID | str | None = None
        if focus:
            if project_id is None:
                raise ValidationError("--focus needs a project (--project)")
            focus_kind, focus_id = await resolve_focus(s, who.id, project_id, focus)
        elif demo and project_id is not None:
            name = (await s.execute(select(Project.name).where(Project.id == project_id))).scalar_one()
            if name == "Atlas 2.0 Launch":
                focus_kind, focus_id = "task", str((await focus_ids(s, project_id))["task"])
        record = await chat.create_session(
            s, who.id, project_id=project_id, focus_kind=focus_kind, focus_id=focus_id, active_agent=agent
        )
        return ChatTarget(who.id, record.id)


async def _default_project(s: Any, user_id: uuid.UUID, demo: bool) -> uuid.UUID | None:
    """The user's only project (the demo project with `--demo`); several is the CLI's usual error."""
    from orrery.cli.common import the_only_project
    from orrery.repo import identity

    projects = await identity.list_projects(s, user_id)
    if not projects:
        return None
    demo_project = [p for p in projects if demo and p.name == "Atlas 2.0 Launch"]
    chosen = demo_project or projects
    return uuid.UUID(the_only_project([(p.id, p.name) for p in chosen], "belong to this user"))


async def read_line(prompt: Callable[[], str]) -> str:
    """`prompt()` in a daemon thread: cancelling the wait (Ctrl-C) returns at once, and the blocked
    read never holds up the exit the way a worker-pool thread would."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(line: str | None, error: BaseException | None) -> None:
        if future.done():  # the wait was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def read() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            line = prompt()
        except BaseException as exc:  # EOFError / KeyboardInterrupt travel to the awaiting side
            error = exc
        with contextlib.suppress(RuntimeError):  # the chat has already exited and closed its loop
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=read, name="orrery-input", daemon=True).start()
    return await future


async def run_once(
    db: Database, settings: Settings, target: ChatTarget, message: str, agent: str | None
) -> dict[str, Any]:
    """One turn; the JSON document `orrery chat --once --json` prints."""
    import pydantic_ai

    from orrery.agents.orchestrator import Orchestrator
    from orrery.cli.chat_focus import title_from_first_message

    pydantic_ai.BANNER_ENABLED = False  # scripts read stdout

    async with db.transaction() as s:
        await title_from_first_message(s, target.user_id, target.session_id, message)
    orchestrator = Orchestrator(db, settings)
    events = [e async for e in orchestrator.turn(target.user_id, target.session_id, message, agent=agent)]
    await orchestrator.drain()  # background jobs this turn queued (summary refresh) run before exit
    last = events[-1]
    if last.type == "error":
        again = " (run the same command to retry)" if last.data.get("retry", True) else ""
        raise ValidationError(f"the model failed: {last.data['message']}{again}")
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
    import pydantic_ai

    from orrery.agents.orchestrator import Orchestrator
    from orrery.cli.chat_focus import title_from_first_message

    pydantic_ai.BANNER_ENABLED = False  # the chat owns the terminal
    with contextlib.suppress(ImportError):  # arrow keys recall earlier lines (input() uses readline)
        import readline  # noqa: F401
    orchestrator = Orchestrator(db, settings)
    state: dict[str, Any] = {"agent": None}
    console.print(
        f"[dim]session {target.session_id} · model {settings.model} · "
        "/context /focus /agent /strategy /quit[/]"
    )
    if settings.model == "offline":  # said once per chat; replies never carry it
        from orrery.agents.offline import NOTICE

        console.print(f"[dim]{NOTICE}[/]", markup=True, highlight=False)
    while True:
        try:
            line = (await read_line(lambda: console.input("[bold cyan]you ›[/] "))).strip()
        except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
            console.print()
            return
        if line in ("/quit", "/exit", "/q"):
            await orchestrator.drain()  # queued background jobs (summary refresh) run before exit
            return
        if line.startswith("/"):
            try:
                await _command(orchestrator, target, line, state, console)
            except (OrreryError, ValueError) as exc:
                console.print(f"[red]{exc}[/]")
        elif line:
            console.print("[bold magenta]orrery ›[/]")
            try:
                if not state.get("titled"):
                    async with db.transaction() as s:
                        await title_from_first_message(s, target.user_id, target.session_id, line)
                    state["titled"] = True
                # transient + printed once done: the terminal wraps the whole reply, nothing is cropped
                live = Live(Markdown(""), console=console, auto_refresh=False, transient=True)
                live.vertical_overflow = "visible"
                with live:
                    reply = ""
                    async for event in orchestrator.turn(
                        target.user_id, target.session_id, line, agent=state["agent"]
                    ):
                        reply = _render(live, event, reply)
            except OrreryError as exc:  # a refused turn (limits, bad input): say why, keep chatting
                console.print(f"[red]{exc}[/]")
            state["agent"] = None


def _render(live: Live, event: Any, reply: str) -> str:
    """Stream the reply as rendered markdown; tool calls and errors print above it."""
    console = live.console
    if event.type == "text":
        reply += event.data["delta"]
        live.update(Markdown(reply), refresh=True)
    elif event.type == "tool_call":
        console.print(f"[dim]→ {event.data['name']}({json.dumps(event.data['args'])})[/]", highlight=False)
    elif event.type == "error":
        console.print(f"[red]model error: {event.data['message']} — send the message again to retry[/]")
    elif event.type == "done":
        live.update(Markdown(""), refresh=True)
        live.stop()
        console.print(Markdown(event.data["reply"]), width=console.width, soft_wrap=False)
        console.print(f"[dim]({event.data['agent']} · {event.data['latency_ms']} ms)[/]")
    return reply


async def _command(
    orchestrator: Orchestrator, target: ChatTarget, line: str, state: dict[str, Any], console: Console
) -> None:
    """`/context`, `/agent NAME`, `/strategy NAME`, `/focus NAME|KIND:NAME|KIND:ID|none`."""
    from orrery.cli.chat_focus import focus_name, resolve_focus
    from orrery.memory.scoping import get_strategy
    from orrery.repo import chat
    from orrery.roster import get_agent

    command, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if command == "context":
        await _show_next_context(orchestrator, target, state["agent"], console)
        return
    if command == "agent":
        state["agent"] = get_agent(arg).id
        console.print(f"[dim]the {state['agent']} answers from the next turn on[/]")
        return
    if command not in ("strategy", "focus"):
        console.print("[yellow]commands: /context /focus NAME /agent NAME /strategy NAME /quit[/]")
        return
    async with orchestrator.db.transaction() as s:
        record = await chat.get_session(s, target.user_id, target.session_id)
        if command == "strategy":
            get_strategy(arg)
            record.scoping_strategy = arg
        else:
            if arg in ("", "none"):
                record.focus_kind, record.focus_id = None, None
            else:
                if record.project_id is None:
                    raise ValidationError("this session has no project to focus in")
                record.focus_kind, record.focus_id = await resolve_focus(
                    s, target.user_id, record.project_id, arg
                )
                arg = f"{record.focus_kind} {await focus_name(s, record)}"
    console.print(f"[dim]{command}: {arg or 'none'}[/]")


async def _show_next_context(
    orchestrator: Orchestrator, target: ChatTarget, agent: str | None, console: Console
) -> None:
    """The receipt table of the working context the next turn will see (nothing is stored),
    summarised with the chat's own summarizer (built once, not on every `/context`)."""
    from orrery.cli.receipt import receipt_table
    from orrery.context.working_context import assemble_working_context
    from orrery.repo import chat

    async with orchestrator.db.sessions() as s:
        record = await chat.get_session(s, target.user_id, target.session_id)
        context = await assemble_working_context(
            s,
            agent=agent or record.active_agent or "coach",
            session_id=record.id,
            user_id=target.user_id,
            settings=orchestrator.settings,
            summarizer=orchestrator.summarizer(),
        )
        await s.rollback()
    console.print(receipt_table(context.receipt))
