"""What recall may offer on one turn: the person's earlier messages most related to the current one,
ranked by the one relevance ranking (`backend/orrery/memory/scoping/ranking.py`).

The candidates are bounded whatever the number of chats: the messages of the newest recallable
chats (the same project's first) up to `DENSE_SCAN`, whose stored vectors are all scored, plus the
database's full-text matches in older chats with their neighbours. At most three queries: the
chats (with each one's stamp), the messages of the newest chats the process holds no current copy
of, and the matches with their neighbours when older chats exist. A process keeps each newest
chat's messages as a window (in the history cache, bounded with the chats' own windows) and uses it
while the chat's stamp read this turn matches; when the stamp says only messages were added, it
reads just those and extends the window; any other change (an edit, a message failed) reads the
chat again. So a change by any process is seen on the next turn, and a chat deleted or not to be
remembered is simply not among the chats read. The copies are shared: the person's turns running at
once in a process read the same windows, and one that adds messages adds them in place only when no
other turn reads that window, else to its own copy (which then replaces the held one). The ranking
is `ranked.py`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.config import Settings
from orrery.memory.embedding_models import embedding_model
from orrery.memory.embeddings import DIMENSIONS
from orrery.memory.history import append_rows, database_key
from orrery.memory.history_cache import CachedWindow, history_cache
from orrery.memory.recall.queries import ChatInfo, as_uuid, chat_of, matches, read_spans, recent_chats
from orrery.memory.recall.ranked import Part, RecallPool, RecallRequest, rank_parts
from orrery.memory.scoping.dense import DenseTurn
from orrery.memory.scoping.ranking import NEIGHBOUR_HOPS
from orrery.memory.scoping.window import HistoryWindow
from orrery.text import analyze

RECENT_CHATS = 40
"""The newest recallable chats read in the first query (their titles, sizes, focus and stamps)."""
DENSE_SCAN = 2000
"""Messages of the newest chats whose stored vectors are scored each turn (the bounded dense pass;
as many as a chat's own history window holds)."""
MATCHES = 30
"""Full-text matches taken from chats older than the dense pass, each read with its neighbours."""


async def gather(session: AsyncSession, request: RecallRequest, settings: Settings) -> RecallPool:
    """The ranked units recall may offer for `request` (constant queries: see the module doc)."""
    if not request.query or not request.query.strip():
        return RecallPool(status="no user message to recall for")
    on, chats = await recent_chats(session, request.scope, RECENT_CHATS)
    if not on:
        return RecallPool(
            status="off: recall across chats is turned off in the person's memory settings", queries=1
        )
    if not chats:
        return RecallPool(status="no earlier chat may be recalled", queries=1)
    model = embedding_model(settings)
    reads = _Reads(database_key(session), model.name)
    queries = 1
    try:
        full = reads.plan(chats)
        if reads.spans:
            queries += 1
            reads.add_newest(await read_spans(session, request.scope, reads.spans))
        if len(full) < len(chats) or len(chats) == RECENT_CHATS:  # older chats exist: their matches
            queries += 1
            terms = analyze(request.query)
            reads.add_matches(await matches(session, request.scope, terms, full, MATCHES, NEIGHBOUR_HOPS))
        pool = await rank_parts(reads.parts(), request, DenseTurn(model))
    finally:
        reads.keep()
    pool.queries = queries
    return pool


class _Reads:
    """Which messages a turn needs and where they come from: the process's copies of the newest
    chats while their stamp matches (shared with the person's other turns, which read them at the
    same time), else one read; then the full-text matches' neighbourhoods."""

    def __init__(self, database: str, model: str) -> None:
        self.database, self.model = database, model
        self.held: list[Part] = []
        self.spans: list[tuple[uuid.UUID, int, int]] = []
        self.stale: dict[uuid.UUID, ChatInfo] = {}
        self.grown: dict[uuid.UUID, Part] = {}
        self.lows: dict[uuid.UUID, int] = {}
        self.shared: dict[uuid.UUID, CachedWindow] = {}
        """The process's copies this turn reads (released by `keep`)."""

    def _key(self, chat: ChatInfo) -> tuple[str, str, uuid.UUID, str]:
        return (self.database, "recall", chat.id, self.model)

    def plan(self, chats: Sequence[ChatInfo]) -> list[uuid.UUID]:
        """Take the newest chats up to `DENSE_SCAN` messages; returns the chats taken whole."""
        full: list[uuid.UUID] = []
        room = DENSE_SCAN
        for chat in chats:
            if room <= 0:
                break
            lo = max(1, chat.message_count - room + 1)
            room -= chat.message_count - lo + 1
            self.lows[chat.id] = lo
            full += [chat.id] if lo == 1 else []
            entry = history_cache.share(self._key(chat))
            if entry is not None and entry.epoch == (*chat.stamp, lo):
                self.shared[chat.id] = entry
                self.held.append(Part(chat, entry.window))
            elif entry is not None and (held := _held_count(entry.epoch, chat, lo)) is not None:
                self.shared[chat.id] = entry
                self.grown[chat.id] = Part(chat, entry.window)  # read only what is new
                self.spans.append((chat.id, held + 1, chat.message_count))
            else:
                if entry is not None:
                    history_cache.release(entry)
                self.stale[chat.id] = chat
                self.spans.append((chat.id, lo, chat.message_count))
        return full

    def add_newest(self, rows: Sequence[Any]) -> None:
        """The stale chats' newest parts, read, and the grown chats' new messages added to the
        copies held (kept for later turns; an empty one too)."""
        for chat_id, group in _groups(rows, 0):
            grown = self.grown.pop(chat_id, None)
            if grown is not None:
                self._grow(grown, [r[1:] for r in group])
            else:
                self._fresh(self.stale.pop(chat_id), _window([r[1:] for r in group], self.model))
        for grown in self.grown.values():  # nothing recallable was added after all
            self._grow(grown, [])
        for chat in self.stale.values():
            self._fresh(chat, _window([], self.model))
        self.grown.clear()
        self.stale.clear()

    def _grow(self, part: Part, rows: Sequence[Any]) -> None:
        epoch = (*part.chat.stamp, self.lows[part.chat.id])
        entry = history_cache.grow(
            self._key(part.chat), self.shared[part.chat.id], epoch, lambda w: append_rows(w, rows)
        )
        self.shared[part.chat.id] = entry
        self.held.append(Part(part.chat, entry.window))

    def _fresh(self, chat: ChatInfo, window: HistoryWindow) -> None:
        entry = CachedWindow((*chat.stamp, self.lows[chat.id]), window)
        entry.readers = 1  # this turn's, from the start: shared as soon as it is held
        history_cache.put(self._key(chat), entry)
        self.shared[chat.id] = entry
        self.held.append(Part(chat, window))

    def add_matches(self, rows: Sequence[Any]) -> None:
        """The matches' neighbourhoods, never what a chat's newest part already holds."""
        for chat_id, group in _groups(rows, 0):
            lo = self.lows.get(chat_id)
            kept = [r[7:] for r in group if lo is None or r[7] < lo]
            if kept:
                self.held.append(Part(chat_of(group[0]), _window(kept, self.model)))

    def parts(self) -> list[Part]:
        """Every run, chats oldest first, each chat's runs in seq order."""
        return sorted(self.held, key=lambda p: (p.chat.created_at, str(p.chat.id), p.window.first_seq))

    def keep(self) -> None:
        """The turn no longer reads the process's copies (their stamps say when they are stale)."""
        for entry in self.shared.values():
            history_cache.release(entry)
        self.shared.clear()


def _held_count(epoch: Any, chat: ChatInfo, lo: int) -> int | None:
    """The messages a held copy was read at, when it differs from the chat only by messages added
    since (the same history epoch, failed messages and first seq, more messages: each is stored by
    one statement that also counts it, so every seq up to a count read is there to read); else None."""
    if not isinstance(epoch, tuple) or len(epoch) != 4:
        return None
    epoch_then, failed_then, count_then, lo_then = epoch
    epoch_now, failed_now, count_now = chat.stamp
    same = (epoch_then, failed_then, lo_then) == (epoch_now, failed_now, lo)
    return int(count_then) if same and count_now > count_then else None


def _groups(rows: Sequence[Any], column: int) -> list[tuple[uuid.UUID, Sequence[Any]]]:
    """Consecutive rows with the same chat id (in `column`, as the driver gives it)."""
    out: list[tuple[uuid.UUID, Sequence[Any]]] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][column] != rows[start][column]:
            out.append((as_uuid(rows[start][column]), rows[start:i]))
            start = i
    return out


def _window(rows: Sequence[Any], model: str) -> HistoryWindow:
    window = HistoryWindow(DIMENSIONS, model)
    append_rows(window, rows)
    return window
