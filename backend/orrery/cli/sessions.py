"""`orrery sessions`: create, list, rename, update (remember or not) and delete chat sessions, and
append messages."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import (
    err,
    out,
    resolve_user,
    run,
    uuid_or_404,
    with_db,
)

sessions_app = typer.Typer(help="Chat sessions.", no_args_is_help=True)
RECORD_FIELDS = (
    "id",
    "user_id",
    "project_id",
    "title",
    "focus_kind",
    "focus_id",
    "active_agent",
    "scoping_strategy",
    "remember",
    "message_count",
    "created_at",
)
"""What `orrery sessions create --json` prints."""


@sessions_app.command("create")
def sessions_create(
    user: Annotated[str, typer.Option(help="User id or email.")],
    project: Annotated[str | None, typer.Option(help="Project id.")] = None,
    focus: Annotated[str | None, typer.Option(help="KIND:ID, e.g. task:<uuid> or project:<uuid>.")] = None,
    agent: Annotated[str | None, typer.Option(help="The active agent.")] = None,
    strategy: Annotated[str | None, typer.Option(help="Message-scoping strategy for this session.")] = None,
    title: Annotated[str | None, typer.Option(help="A title.")] = None,
    remember: Annotated[
        bool, typer.Option("--remember/--no-remember", help="--no-remember: don't remember this chat.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole session record.")] = False,
) -> None:
    """Open a chat session (optionally focused) and print its id."""
    from orrery.errors import ValidationError
    from orrery.memory.scoping import get_strategy
    from orrery.repo import chat

    focus_kind, _, focus_id = (focus or "").partition(":")
    if focus and not focus_id:
        err.print("[bold red]error:[/] --focus must look like KIND:ID, e.g. task:<uuid>")
        raise typer.Exit(2)

    async def body(db: Any) -> Any:
        if strategy is not None:
            get_strategy(strategy)
        async with db.transaction() as session:
            owner = await resolve_user(session, user)
            if focus and project is None:
                raise ValidationError("--focus needs --project")
            record = await chat.create_session(
                session,
                owner.id,
                project_id=project,
                focus_kind=focus_kind or None,
                focus_id=focus_id or None,
                title=title,
                active_agent=agent,
                remember=remember,
            )
            record.scoping_strategy = strategy
            await session.flush()
            return record

    record = run(lambda s: with_db(s, body))
    if not as_json:
        print(record.id)
        return
    print(json.dumps({f: getattr(record, f) for f in RECORD_FIELDS}, default=str))


@sessions_app.command("say")
def sessions_say(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    text: Annotated[str, typer.Argument(help="The message.")],
    role: Annotated[str, typer.Option(help="user, assistant, system or tool.")] = "user",
    agent: Annotated[str | None, typer.Option(help="Agent attribution for assistant messages.")] = None,
) -> None:
    """Append a message to a session (handy for trying scoping strategies)."""
    from orrery.db.models import ChatSession
    from orrery.errors import NotFoundError
    from orrery.memory.embedding_models import embedding_model
    from orrery.memory.messages import append_message
    from orrery.repo import chat

    async def body(db: Any, settings: Any) -> int:
        async with db.transaction() as session:
            record = await session.get(ChatSession, uuid_or_404(session_id))
            if record is None:
                raise NotFoundError("session", session_id)
            message = await append_message(
                session,
                record.user_id,
                record.id,
                chat.NewMessage(role, text, agent_id=agent),
                embedding=embedding_model(settings),  # a remote model's vector: a queued job
            )
            return message.seq

    out.print(f"message {run(lambda s: with_db(s, lambda db: body(db, s)))} appended")


@sessions_app.command("list")
def sessions_list(
    user: Annotated[str, typer.Option(help="User id or email.")],
    limit: Annotated[int, typer.Option(help="How many (1-200).")] = 20,
    offset: Annotated[int, typer.Option(help="Skip this many (paging).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
) -> None:
    """A user's sessions, most recently active first, with title and focus."""
    from orrery.repo import sessions as repo
    from orrery.services.sessions import list_item_out

    async def body(db: Any) -> list[Any]:
        async with db.transaction() as session:
            owner = await resolve_user(session, user)
            return [
                list_item_out(i)
                for i in await repo.list_sessions(session, owner.id, limit=limit, offset=offset)
            ]

    items = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps([i.model_dump(mode="json") for i in items]))
        return
    for i in items:
        focus = f"{i.focus.kind}: {i.focus.name}" if i.focus else "no focus"
        kept = "" if i.remember else ", not remembered"
        out.print(f"{i.id}  {i.title or 'Untitled chat'}  ({focus}, {i.message_count} messages{kept})")


@sessions_app.command("rename")
def sessions_rename(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    title: Annotated[str, typer.Argument(help="The new title (empty clears it).")],
    user: Annotated[str, typer.Option(help="The session's owner (id or email).")],
) -> None:
    """Rename one of USER's sessions."""
    from orrery.repo import sessions as repo

    async def body(db: Any) -> None:
        async with db.transaction() as session:
            owner = await resolve_user(session, user)
            await repo.rename_session(session, owner.id, session_id, title)

    run(lambda s: with_db(s, body))
    out.print("session renamed")


@sessions_app.command("update")
def sessions_update(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    remember: Annotated[
        bool | None,
        typer.Option(
            "--remember/--no-remember",
            help="Remember the chat, or not: never recalled in other chats, no facts, no patterns.",
        ),
    ] = None,
    user: Annotated[
        str | None, typer.Option(help="The session's owner (id or email); default: whoever owns it.")
    ] = None,
) -> None:
    """Change a session: whether it is remembered."""
    from orrery.db.models import ChatSession
    from orrery.errors import NotFoundError
    from orrery.repo import sessions as repo

    if remember is None:
        err.print("[bold red]error:[/] nothing to change: pass --remember or --no-remember")
        raise typer.Exit(2)

    async def body(db: Any) -> None:
        async with db.transaction() as session:
            if user is not None:
                owner = (await resolve_user(session, user)).id
            else:  # the CLI runs with database access: the session's own owner
                found = await session.get(ChatSession, uuid_or_404(session_id))
                if found is None:
                    raise NotFoundError("session", session_id)
                owner = found.user_id
            await repo.set_remember(session, owner, session_id, remember)

    run(lambda s: with_db(s, body))
    out.print("session remembered" if remember else "session not remembered")


@sessions_app.command("delete")
def sessions_delete(
    session_id: Annotated[str, typer.Option("--session", help="Session id.")],
    user: Annotated[str, typer.Option(help="The session's owner (id or email).")],
    forget_facts: Annotated[
        bool,
        typer.Option(
            "--forget-facts", help="Also forget the facts said in it (`orrery facts list --session`)."
        ),
    ] = False,
) -> None:
    """Delete one of USER's sessions with its messages (a learned summary that read it is rebuilt)."""
    from orrery.services.forget import forget_chat

    async def body(db: Any, settings: Any) -> Any:
        async with db.transaction() as session:
            owner = await resolve_user(session, user)
            return await forget_chat(session, settings, owner.id, session_id, forget_facts=forget_facts)

    gone = run(lambda s: with_db(s, lambda db: body(db, s)))
    facts = f" with {gone.facts} fact(s)" if forget_facts else ""
    out.print(
        f"session deleted{facts}{'; the learned summary will be rebuilt' if gone.summary_rebuilt else ''}"
    )
