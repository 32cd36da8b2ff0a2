"""Searchable history: what relevance asks a history source for instead of reading it message by message.

`DbHistory` answers with a `HistoryWindow` it keeps between turns (only newer messages are read; see
`backend/orrery/memory/history_cache.py`). Any other `HistorySource` (tests, a developer's own) is wrapped by
`InMemorySearch`, which reads the window once and embeds it, so every source gets the same ranking.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from orrery.memory.scoping.base import HistoryMessage, HistorySource
from orrery.memory.scoping.window import HistoryWindow, window_of
from orrery.text import analyze


@runtime_checkable
class SearchableHistory(Protocol):
    """A history that can hand relevance its recent window with the columns ranking needs."""

    latest_seq: int

    def window(self, limit: int) -> Any:
        """`async with history.window(limit) as w`: the newest `limit` messages as a `HistoryWindow`,
        not changed by anyone else while held."""
        ...


@runtime_checkable
class SessionArchive(Protocol):
    """Full-text search over a whole stored session: how relevance reaches messages older than its
    window in a session longer than the scan limit (one search and one read, only then)."""

    async def search(
        self,
        terms: Sequence[str],
        limit: int,
        before_seq: int | None = None,
        rates: Mapping[str, float] | None = None,
    ) -> list[int]:
        """Seqs of messages older than `before_seq` matching any analyzed term, best first (`rates`:
        each term's share of the recent window, a hint of how common it is in the whole session)."""
        ...

    async def fetch(self, seqs: Sequence[int]) -> list[HistoryMessage]:
        """The messages with these seqs, oldest first."""
        ...


class InMemorySearch:
    """Searchable history over one read of a plain `HistorySource` (terms and embeddings computed here)."""

    def __init__(self, source: HistorySource) -> None:
        self.source = source
        self.latest_seq = source.latest_seq

    @asynccontextmanager
    async def window(self, limit: int) -> AsyncIterator[HistoryWindow]:
        messages = await self.source.recent(limit)
        yield window_of(messages, [" ".join(analyze(m.content)) for m in messages], await _embed(messages))


async def _embed(messages: list[Any]) -> Any:
    from orrery.memory.embeddings import EMBED_CHARS, get_embedder

    embedder = await get_embedder()
    if embedder is None or not messages:
        return None
    texts = [m.content[:EMBED_CHARS] for m in messages]
    return await asyncio.to_thread(embedder.embed_once, texts)


def searchable(source: HistorySource) -> SearchableHistory:
    """The source itself when it can search, else an in-memory wrapper."""
    return source if isinstance(source, SearchableHistory) else InMemorySearch(source)
