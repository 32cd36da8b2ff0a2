"""What the last reply read from the knowledge base through its tools. The inspector's "Knowledge
packet" shows the packet auto-context stored for the chat; a reply can also quote entries it fetched
itself (`get_entry`, `search_knowledge`, `load_context_for_task`) while no packet was loaded, and the
inspector then says so instead of "no knowledge loaded". One query: the chat's latest reply."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Message

KNOWLEDGE_TOOLS = ("get_entry", "search_knowledge", "load_context_for_task")
_CODE = re.compile(r"\b[A-Z]{2,4}-\d{2,4}\b")


@dataclass(frozen=True)
class ToolRead:
    """One knowledge tool call of the last reply and the entry codes its result named."""

    tool: str
    codes: list[str]


def knowledge_reads(tool_calls: list[Any] | None) -> list[ToolRead]:
    """The successful knowledge tool calls among `tool_calls` (as stored on a message)."""
    reads = []
    for call in tool_calls or []:
        if not isinstance(call, dict) or call.get("name") not in KNOWLEDGE_TOOLS or call.get("error"):
            continue
        codes = list(dict.fromkeys(_CODE.findall(str(call.get("result") or ""))))
        if codes:
            reads.append(ToolRead(str(call["name"]), codes))
    return reads


async def last_reply_reads(session: AsyncSession, chat_id: uuid.UUID) -> list[ToolRead]:
    """The knowledge tool reads of the chat's latest (not superseded) reply; the caller has checked
    the chat is the user's."""
    calls = await session.scalar(
        select(Message.tool_calls)
        .where(Message.session_id == chat_id, Message.role == "assistant", Message.superseded_at.is_(None))
        .order_by(Message.seq.desc())
        .limit(1)
    )
    return knowledge_reads(calls)
