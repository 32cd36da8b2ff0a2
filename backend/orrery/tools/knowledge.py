"""Knowledge-base tools: load context for a task, read an entry, search, improve or create an entry."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import Field
from pydantic_ai import ModelRetry, RunContext

from orrery.deps import TurnDeps
from orrery.knowledge.capture import create_entry as capture_entry
from orrery.knowledge.capture import latest_user_seq
from orrery.knowledge.entries import FullEntry
from orrery.knowledge.entries import get_entry as read_entry
from orrery.knowledge.entries import update_entry as write_entry
from orrery.knowledge.load_context import load_context_for_task as load
from orrery.knowledge.packet import format_context_packet
from orrery.knowledge.search import search_entries
from orrery.text import inline_data
from orrery.tools._errors import readable_errors
from orrery.validation import Text

Query = Annotated[Text, Field(max_length=2_000)]
Limit = Annotated[int, Field(ge=1, le=50)]


def _project(ctx: RunContext[TurnDeps]) -> uuid.UUID:
    if ctx.deps.project_id is None:
        raise ModelRetry("This conversation is not inside a project, so there is no knowledge base to use.")
    return ctx.deps.project_id


def _render(entry: FullEntry) -> str:
    lines = [
        f"## {entry.code}: {inline_data(entry.name)}",
        f"- **Collection:** {inline_data(entry.collection_name)}",
    ]
    lines.append(f"- **Description:** {inline_data(entry.description or '(none)')}")
    paths = entry.data.get("code_paths") or []
    lines.append(f"- **Code paths:** {', '.join(map(str, paths)) if paths else '(none yet)'}")
    for correction in entry.data.get("corrections", []):
        lines.append(f"- **Correction:** {inline_data(str(correction.get('text', '')))}")
    if entry.related:
        lines += ["", "### Related entries"]
        lines += [
            f"- **{r.code}:** {inline_data(r.name)} — {r.relation} ({r.direction})" for r in entry.related
        ]
    return "\n".join(lines)


async def load_context_for_task(
    ctx: RunContext[TurnDeps], task_description: Text, max_results: int = 10, max_hops: int = 2
) -> str:
    """Load the team's domain knowledge relevant to a task, as a Context Packet. Read-only.

    Searches the knowledge base, follows relations between entries, ranks what it finds and says how
    confident the match is (high, medium, low). Call it before working on a domain task, and when the
    user asks to load or get context, or what the team knows about something.

    Args:
        task_description: The task or question in the user's words.
        max_results: At most this many entries (1 to 100).
        max_hops: How far to follow relations from the best matches (0 to 5).
    """
    with readable_errors():
        async with ctx.deps.db.sessions() as session:
            result = await load(
                session,
                ctx.deps.user_id,
                _project(ctx),
                task_description,
                max_results=max_results,
                max_hops=max_hops,
            )
    return format_context_packet(result)


async def get_entry(ctx: RunContext[TurnDeps], code: Text) -> str:
    """Read one knowledge-base entry in full: description, code paths, corrections, relations. Read-only.

    Args:
        code: The entry's code, such as BR-012 or GT-019.
    """
    with readable_errors(". Use a code from the Context Packet or from search_knowledge."):
        async with ctx.deps.db.sessions() as session:
            return _render(await read_entry(session, ctx.deps.user_id, _project(ctx), code))


async def search_knowledge(ctx: RunContext[TurnDeps], query: Query, limit: Limit = 10) -> str:
    """Search the knowledge base by words or codes; best matches first. Read-only.

    Args:
        query: Words or entry codes to look for.
        limit: At most this many results (1 to 50).
    """
    async with ctx.deps.db.single() as session:  # one statement when it finds something
        found = await search_entries(session, ctx.deps.user_id, _project(ctx), query, limit=limit)
    if not found.hits:
        return f'No entries match "{inline_data(query)}".'
    return "\n".join(
        f"- **{h.code}:** {inline_data(h.name)} "
        f"({inline_data(h.collection_name)}; matched {h.matched_terms} terms)"
        for h in found.hits
    )


async def update_entry(
    ctx: RunContext[TurnDeps],
    code: Text,
    add_code_paths: list[Text] | None = None,
    correction: Text | None = None,
) -> str:
    """Improve a knowledge-base entry while working: record files that implement it, or a correction.

    Use it when you discover which files implement a domain concept, or when the user corrects a
    term or a fact. The change is recorded with this conversation as its source.

    Args:
        code: The entry's code, such as BR-012.
        add_code_paths: Repository-relative file paths that implement the entry.
        correction: A correction of terminology or facts, in one or two sentences.
    """
    with readable_errors():
        async with ctx.deps.db.transaction() as session:
            entry = await write_entry(
                session,
                ctx.deps.user_id,
                _project(ctx),
                code,
                add_code_paths=add_code_paths,
                correction=correction,
                session_id=ctx.deps.session_id,
            )
    return "Updated.\n\n" + _render(entry)


async def create_entry(
    ctx: RunContext[TurnDeps],
    collection: Text,
    name: Text,
    description: Text,
    code: Text | None = None,
    code_paths: list[Text] | None = None,
    links: list[Text] | None = None,
) -> str:
    """Capture new domain knowledge as a knowledge-base entry, when the person agrees to capture it.

    Use it after offering to capture knowledge the knowledge base does not hold yet (a rule, a term,
    a decision) and the person says yes, or asks you to record it. Write the person's own facts, not
    guesses. The entry is recorded with this conversation and message as its source.

    Args:
        collection: The collection's slug: business-rules, glossary, decisions, features, standards,
            principles, tensions, strategy or tracking-events (created on first use), or another
            existing one.
        name: A short name for the entry, such as "Annual plan overage rule".
        description: What the entry says, in one to a few sentences.
        code: The entry's code, such as BR-013; leave it out to get the next free one.
        code_paths: Repository-relative file paths that implement the entry.
        links: Codes of existing entries this one relates to, such as BR-012.
    """
    with readable_errors():
        async with ctx.deps.db.transaction() as session:
            entry = await capture_entry(
                session,
                ctx.deps.user_id,
                _project(ctx),
                collection=collection,
                name=name,
                description=description,
                code=code,
                code_paths=code_paths,
                links=links,
                session_id=ctx.deps.session_id,
                seq=await latest_user_seq(session, ctx.deps.session_id),
            )
    return "Created.\n\n" + _render(entry)
