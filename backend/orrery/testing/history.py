"""In-memory conversation history and summary store for strategy tests (no database needed)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.summaries import StoredSummary


class MemoryHistory:
    """A `HistorySource` over a list; counts reads and the largest one, like the database version."""

    def __init__(self, messages: Sequence[tuple[str, str]]) -> None:
        self.messages = [
            HistoryMessage(seq=i + 1, role=r, content=c, has_tool_calls=False)
            for i, (r, c) in enumerate(messages)
        ]
        self.latest_seq = len(self.messages)
        self.reads = 0
        self.largest_read = 0

    async def recent(self, limit: int) -> list[HistoryMessage]:
        """The newest `limit` messages, oldest first."""
        self.reads += 1
        self.largest_read = max(self.largest_read, limit)
        return self.messages[max(0, len(self.messages) - limit) :] if limit > 0 else []

    async def between(self, after_seq: int, through_seq: int) -> list[HistoryMessage]:
        """Messages with `after_seq < seq <= through_seq`."""
        self.reads += 1
        found = [m for m in self.messages if after_seq < m.seq <= through_seq]
        self.largest_read = max(self.largest_read, len(found))
        return found


class MemorySummaryStore:
    """The `summary` strategy's store, in a dict."""

    def __init__(self) -> None:
        self.saved: dict[uuid.UUID, StoredSummary] = {}

    async def get(self, session_id: uuid.UUID) -> StoredSummary | None:
        """The stored summary, if any."""
        return self.saved.get(session_id)

    async def save(
        self, session_id: uuid.UUID, summary: str, covered_through_seq: int, model: str, tokens: int
    ) -> None:
        """Keep the newest summary."""
        self.saved[session_id] = StoredSummary(summary, covered_through_seq, model)


def tool_conversation(turns: int, *, marker: str = "") -> list[tuple[str, str]]:
    """`turns` exchanges; every third assistant message calls a tool answered by one or two results.

    Every content is unique (it carries its own index) so selected messages can be traced back.
    """
    out: list[tuple[str, str]] = []
    for i in range(turns):
        out.append(
            ("user", f"[{i}u] {marker}Update {i}: we decided to ship item {i} after the checklist review.")
        )
        if i % 3 == 2:
            out.append(("assistant", f"[{i}a] Calling get_linked_entities for item {i}."))
            out.append(("tool", f"[{i}t1] Item {i} depends on the legal review and the pricing copy."))
            if i % 2:
                out.append(("tool", f"[{i}t2] Item {i} belongs to the plan Launch marketing."))
        else:
            out.append(("assistant", f"[{i}a] Noted item {i}; the next step is the release checklist."))
    return out
