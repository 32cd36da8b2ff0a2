"""Searchable history: what relevance asks the database for instead of reading every message.

`DbHistory` answers these with stored columns and the full-text index. Any other `HistorySource`
(tests, a developer's own) is wrapped by `InMemorySearch`, which reads the window once and answers
the same questions in Python, so every source gets the same relevance ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from backend.memory.scoping.base import HistoryMessage, HistorySource
from backend.text import analyze, bm25_scores


@dataclass(frozen=True)
class OutlineRow:
    """A message without its text: enough to group units, cost them and rank them densely."""

    seq: int
    role: str
    tokens: int | None
    """Stored content tokens in the requested encoding (None: not stored, count the text)."""
    embedding: bytes | None
    created_at: datetime | None = None


@runtime_checkable
class SearchableHistory(Protocol):
    """The three questions relevance asks (each one query)."""

    async def outline(self, limit: int, encoding: str) -> list[OutlineRow]:
        """The newest `limit` messages without text, oldest first, with stored counts in `encoding`."""
        ...

    async def search(self, terms: Sequence[str], limit: int) -> list[int]:
        """Seqs of messages matching any analyzed term, best first."""
        ...

    async def fetch(self, seqs: Sequence[int]) -> list[HistoryMessage]:
        """The messages with these seqs, oldest first."""
        ...


class InMemorySearch:
    """Searchable history over one read of a plain `HistorySource` (BM25 and embeddings in Python)."""

    def __init__(self, source: HistorySource) -> None:
        self.source = source
        self._messages: list[HistoryMessage] | None = None
        self._docs: list[list[str]] = []
        self._limit = 0

    async def _load(self, limit: int) -> list[HistoryMessage]:
        if self._messages is None or limit > self._limit:
            self._messages = await self.source.recent(limit)
            self._docs = [analyze(m.content) for m in self._messages]
            self._limit = limit
        return self._messages

    async def outline(self, limit: int, encoding: str) -> list[OutlineRow]:
        messages = await self._load(limit)
        vectors = await _embed([m.content for m in messages])
        return [
            OutlineRow(
                m.seq,
                m.role,
                m.token_counts.get(encoding) if m.token_counts else None,
                vectors[i] if vectors else None,
                m.created_at,
            )
            for i, m in enumerate(messages)
        ]

    async def search(self, terms: Sequence[str], limit: int) -> list[int]:
        messages = self._messages or []
        scores = bm25_scores(list(dict.fromkeys(terms)), self._docs)
        order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], -i))
        return [messages[i].seq for i in order[:limit]]

    async def fetch(self, seqs: Sequence[int]) -> list[HistoryMessage]:
        wanted = set(seqs)
        return [m for m in self._messages or [] if m.seq in wanted]


async def _embed(texts: list[str]) -> list[bytes] | None:
    from backend.memory.embeddings import get_embedder, to_bytes

    embedder = await get_embedder()
    if embedder is None or not texts:
        return None
    matrix = await embedder.embed_async(texts)
    return [to_bytes(row) for row in matrix]


def searchable(source: HistorySource) -> SearchableHistory:
    """The source itself when it can search, else an in-memory wrapper."""
    return source if isinstance(source, SearchableHistory) else InMemorySearch(source)
