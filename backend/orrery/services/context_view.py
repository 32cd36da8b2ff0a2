"""The working context a session's next turn would see (or a preview with another strategy, a past
turn's view, or strategies side by side), shared by the API, the web inspector and the CLI. Previews
and comparisons store nothing."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.orchestrator import Orchestrator
from orrery.errors import ValidationError
from orrery.memory.summaries import Summarizer


async def next_context(
    session: AsyncSession,
    orchestrator: Orchestrator,
    user_id: uuid.UUID,
    session_id: str,
    *,
    scoping: str | None = None,
    compare: str | None = None,
    at: int | None = None,
) -> dict[str, Any]:
    """System prompt, scoped messages and receipt as the next turn assembles them; `scoping`
    previews another strategy, `at` a past turn's view, `compare` returns a comparison instead."""
    from orrery.context.compare import compare_strategies, preview_context

    settings = orchestrator.settings
    summarizer = orchestrator.summarizer()  # the turns' own, built once per process
    if compare is not None:
        if scoping is not None:
            raise ValidationError("pass `scoping` or `compare`, not both")
        found = await compare_strategies(
            session,
            user_id=user_id,
            session_id=session_id,
            names=compare,
            settings=settings,
            at=at,
            summarizer=summarizer,
        )
        return found.as_dict()
    if scoping is not None or at is not None:
        wc = await preview_context(
            session,
            user_id=user_id,
            session_id=session_id,
            settings=settings,
            scoping=scoping,
            at=at,
            summarizer=summarizer,
        )
        return {"system_prompt": wc.system_prompt, "messages": wc.messages, "receipt": wc.receipt.as_dict()}
    return await _upcoming(session, orchestrator, user_id, session_id, summarizer)


async def _upcoming(
    session: AsyncSession,
    orchestrator: Orchestrator,
    user_id: uuid.UUID,
    session_id: str,
    summarizer: Summarizer | None,
) -> dict[str, Any]:
    """The next turn's view, with the notes the model reads after failed turns (a crashed one: its
    lock is free)."""
    from orrery.context.working_context import assemble_working_context
    from orrery.memory.turn_view import unanswered_texts, with_unanswered_notes
    from orrery.repo import chat
    from orrery.roster import get_agent

    record = await chat.get_session(session, user_id, session_id)
    wc = await assemble_working_context(
        session,
        agent=get_agent(record.active_agent or "coach").id,
        session_id=record.id,
        user_id=user_id,
        settings=orchestrator.settings,
        summarizer=summarizer,
    )
    live = await orchestrator.locks.live(record.id)
    failed = await unanswered_texts(session, record.id, live=live)
    return {
        "system_prompt": wc.system_prompt,
        "messages": with_unanswered_notes(wc.messages, failed, ends_with_query=False),
        "receipt": wc.receipt.as_dict(),
    }
