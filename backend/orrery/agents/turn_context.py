"""A turn's working context: the chosen agent's, assembled in the turn's read-only session, with a
note after each failed turn still unanswered and the caller's instructions as a section of their
own (`agents.caller`)."""

from __future__ import annotations

import uuid
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.caller import CallerRequest, caller_section
from orrery.agents.turn_store import PendingTurn
from orrery.config import Settings
from orrery.context.working_context import WorkingContext, assemble_working_context
from orrery.db.models import ChatSession
from orrery.memory.summaries import Summarizer
from orrery.memory.turn_view import unanswered_texts, with_unanswered_notes
from orrery.roster import AgentDefinition


async def turn_context(
    s: AsyncSession,
    settings: Settings,
    summarizer: Summarizer | None,
    user_id: uuid.UUID,
    record: ChatSession,
    pending: PendingTurn,
    chosen: AgentDefinition,
    caller: CallerRequest | None = None,
) -> WorkingContext:
    """The chosen agent's working context for the pending message."""
    failed = await unanswered_texts(s, record.id, live=True) if pending.any_failed else frozenset()
    wc = await assemble_working_context(
        s,
        agent=chosen.id,
        base_prompt=chosen.prompt(),
        session_id=record.id,
        user_id=user_id,
        settings=settings,
        query=pending.text,
        summarizer=summarizer,
        chat=record,
        focus=pending.focus,
        sections=[section] if (section := caller_section(caller)) else (),
    )
    return replace(wc, messages=with_unanswered_notes(wc.messages, failed, ends_with_query=True))
