"""Fact tools: remember something the person said about themselves, or forget it.

A fact said in a chat keeps its provenance (the chat, the seq of the person's message this turn, the
time); one said over MCP (which has no chats) has none. A chat set to "don't remember" refuses.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic_ai import ModelRetry, RunContext

from orrery.db.models import Fact
from orrery.deps import TurnDeps
from orrery.memory.capture import adopt, already_said
from orrery.repo import facts as repo
from orrery.text import inline_data
from orrery.tools._errors import readable_errors
from orrery.validation import Text


def parse_when(value: str | None) -> datetime | None:
    """`2026-03-01` or an ISO timestamp (UTC when no zone is given); anything else is a retry."""
    if value is None or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ModelRetry(f"valid_from {inline_data(value)!r} is not a date; use YYYY-MM-DD") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def describe(fact: Fact) -> str:
    """One fact as the model and MCP clients read it: id, subject, date and the quoted text."""
    about = f" ({inline_data(fact.subject)})" if fact.subject else ""
    since = f", true since {fact.valid_from.date().isoformat()}" if fact.valid_from else ""
    kind = "" if fact.kind == "fact" else f" {fact.kind}" + ("" if fact.project_id else " (every project)")
    noted = fact.created_at.date().isoformat()
    return f"[fact {fact.id}]{kind}{about} noted {noted}{since}: {inline_data(fact.text)}"


async def remember_fact(
    ctx: RunContext[TurnDeps],
    text: Text,
    subject: Text | None = None,
    valid_from: Text | None = None,
    supersedes: Text | None = None,
    kind: Text | None = None,
) -> str:
    """Remember a fact about the person for later chats, when they ask you to remember something or
    state a lasting fact about themselves ("remember that I prefer morning check-ins"). A standing
    instruction or preference the person states is usually captured on its own (it is then listed
    under Standing Instructions): remembering it again stores nothing twice.

    A newer fact replaces an older one: pass the older fact's id as `supersedes` (the prompt lists
    current facts with their ids), or the same `subject`. Never store facts about other people's
    private matters unless the person asked you to.

    Args:
        text: The fact in one sentence, in the third person ("Prefers morning check-ins.").
        subject: A short name for what the fact is about ("check-in time", "sister's city"); a newer
            fact with the same subject replaces the older one.
        valid_from: When it became true, if the person said so (YYYY-MM-DD).
        supersedes: The id of the current fact this one replaces.
        kind: `fact` (the default), or `instruction` / `preference` for how the person wants you to
            work in every later chat of this project ("always include status codes").
    """
    when = parse_when(valid_from)
    with readable_errors():
        async with ctx.deps.db.transaction() as session:
            source, seq = None, None
            if ctx.deps.session_id is not None:
                source, seq = await repo.chat_source(session, ctx.deps.user_id, ctx.deps.session_id)
            said = await already_said(session, ctx.deps.user_id, text, source, seq)
            if said is not None:  # the capture stored it: only what the model adds
                older = await adopt(session, ctx.deps.user_id, said, subject, supersedes)
                note = "".join(f"\nIt replaces [fact {f.id}]: {inline_data(f.text)}" for f in older)
                return f"Already remembered {describe(said)}{note}"
            fact, older = await repo.create_fact(
                session,
                ctx.deps.user_id,
                text,
                subject=subject,
                valid_from=when,
                supersedes=supersedes,
                source_session_id=source,
                source_seq=seq,
                kind=kind,
                project_id=ctx.deps.project_id if kind in repo.STANDING_KINDS else None,
            )
    note = "".join(f"\nIt replaces [fact {f.id}]: {inline_data(f.text)}" for f in older)
    return f"Remembered {describe(fact)}{note}"


async def forget_fact(ctx: RunContext[TurnDeps], fact_id: Text) -> str:
    """Forget a remembered fact (and the older versions it replaced) when the person asks you to.

    Args:
        fact_id: The fact's id, as listed with the current facts in the prompt.
    """
    with readable_errors(". Use a fact id from the remembered facts in the prompt."):
        async with ctx.deps.db.transaction() as session:
            fact = await repo.get_fact(session, ctx.deps.user_id, fact_id)
            text = fact.text
            gone = await repo.delete_fact(session, ctx.deps.user_id, fact.id)
    also = f" and {len(gone) - 1} earlier version(s)" if len(gone) > 1 else ""
    return f"Forgot [fact {gone[0]}]{also}: {inline_data(text)}"


async def list_remembered_facts(ctx: RunContext[TurnDeps]) -> str:
    """The person's current remembered facts, one per line (the MCP facts resource)."""
    async with ctx.deps.db.sessions() as session:
        facts = await repo.list_facts(session, ctx.deps.user_id)
    if not facts:
        return "No remembered facts."
    return "\n".join(f"- {describe(f)}" for f in facts)
