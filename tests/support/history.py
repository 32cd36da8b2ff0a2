"""An in-memory `HistorySource` for strategy unit tests (the DB-backed one is tested via assembly)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from orrery.config import Settings
from orrery.memory.scoping.base import HistoryMessage, ScopingContext
from orrery.tokens import counter_for

SETTINGS = Settings(_env_file=None)  # type: ignore[call-arg]
COUNTER = counter_for("offline")


def scoping_context(
    history: ListHistory,
    *,
    agent: str = "coach",
    budget: int = 2500,
    query: str | None = None,
    options: dict[str, Any] | None = None,
) -> ScopingContext:
    """What a strategy is handed on one turn over `history` (default settings, the offline counter)."""
    return ScopingContext(
        agent=agent,
        session_id=uuid.uuid4(),
        history=history,
        query=query,
        budget=budget,
        counter=COUNTER,
        settings=SETTINGS,
        options=options or {},
    )


class ListHistory:
    """Messages held in a list; counts reads like the database version."""

    def __init__(self, messages: Sequence[tuple[str, str]]) -> None:
        self.messages = [HistoryMessage(seq=i + 1, role=r, content=c) for i, (r, c) in enumerate(messages)]
        self.latest_seq = len(self.messages)
        self.queries = 0

    async def recent(self, limit: int) -> list[HistoryMessage]:
        self.queries += 1
        return self.messages[max(0, len(self.messages) - limit) :] if limit > 0 else []

    async def between(self, after_seq: int, through_seq: int) -> list[HistoryMessage]:
        self.queries += 1
        return [m for m in self.messages if after_seq < m.seq <= through_seq]


def conversation(turns: int) -> list[tuple[str, str]]:
    """`turns` user/assistant pairs about everyday launch work."""
    out: list[tuple[str, str]] = []
    for i in range(turns):
        out.append(("user", f"Update {i}: the release checklist moved forward, item {i} is done."))
        out.append(("assistant", f"Nice progress on item {i}. What is the next step on the checklist?"))
    return out
