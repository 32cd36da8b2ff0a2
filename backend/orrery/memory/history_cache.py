"""A process's copies of recent session histories, coherent with the database across processes.

Relevance ranks a session's last ~2,000 messages on every turn. Messages are append-only except for
a rewind (regenerate) that deletes a tail, so a process keeps each session's `HistoryWindow` and, on
the next turn, reads only the messages written since, in the same single query that reads the
session's `history_epoch`. The database bumps that epoch (triggers, migration 0010he) whenever a
stored message is deleted or a field the window holds is changed, by any process or by hand; a
window whose epoch differs is dropped and read again. So every answer equals a fresh read.

Bounded by the bytes its windows hold (`ORRERY_HISTORY_CACHE_MB` per worker, each window's
`HistoryWindow.nbytes`; 0 keeps nothing): the least recently used windows go first, and a person's
turn touches their chat and the earlier chats recall reads together, so what goes first is the
least recently active people's. A window that was evicted is read again on its next turn: nothing
depends on it fitting, it only costs a read. Hits, misses, evictions and the bytes held are metrics
(`orrery_history_cache_*`), so the budget can be sized from a running server (docs/operations.md).
Keyed by database URL and session id: one process may talk to several databases.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from cachetools import LRUCache

from orrery.memory.scoping.window import HistoryWindow


def _record(event: str, held_bytes: int | None = None) -> None:
    """The cache's metrics. Imported when first counted, not with this module: `orrery serve` sizes
    the cache before it sets the metrics directory, and prometheus_client picks how it counts (one
    process or several) when first imported."""
    from orrery.ops.metrics import record_history_cache

    record_history_cache(event, held_bytes)


DEFAULT_MB = 128.0
MB = 1 << 20


class CachedWindow:
    """A session's window and the stamp it was read at (history epoch and session creation time)."""

    __slots__ = ("epoch", "last_id", "readers", "window")

    def __init__(self, epoch: Hashable, window: HistoryWindow) -> None:
        self.epoch = epoch
        self.window = window
        self.last_id: Hashable | None = None
        """The id of the window's newest message: the next read checks that row is still there."""
        self.readers = 0
        """Turns reading a shared window (`HistoryCache.share`) now."""


class _Windows(LRUCache[Hashable, CachedWindow]):
    """An LRU by bytes that counts what it evicts."""

    evictions = 0

    def popitem(self) -> tuple[Hashable, CachedWindow]:
        item = super().popitem()
        self.evictions += 1
        _record("eviction")
        return item


def _size(entry: CachedWindow) -> int:
    return max(1, entry.window.nbytes())


class HistoryCache:
    """Thread-safe LRU of session windows, sized by the bytes they hold."""

    def __init__(self, max_mb: float = DEFAULT_MB) -> None:
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.configure(max_mb)

    def configure(self, max_mb: float) -> None:
        """Apply the size setting, in MB (drops everything held)."""
        with self._lock:
            self.max_bytes = int(max_mb * MB)
            self._items: _Windows = _Windows(maxsize=max(1, self.max_bytes), getsizeof=_size)

    @property
    def evictions(self) -> int:
        return self._items.evictions

    @property
    def held_bytes(self) -> int:
        return int(self._items.currsize)

    def _counted(self, entry: CachedWindow | None) -> None:
        if entry is None:
            self.misses += 1
        else:
            self.hits += 1
        _record("hit" if entry is not None else "miss", self.held_bytes)

    def take(self, key: Hashable) -> CachedWindow | None:
        """Remove and return a session's window (the caller extends it, then `put`s it back), so two
        turns never extend the same window at once."""
        with self._lock:
            entry = self._items.pop(key, None)
            self._counted(entry)
            return entry

    def share(self, key: Hashable) -> CachedWindow | None:
        """A window several turns may read at once (recall's copies of a person's other chats): it
        stays held and counts the caller as a reader until `release`. No reader changes it; `grow`
        adds to it in place only for a lone reader. (`take` would leave every concurrent turn of the
        person without it, to read the chat again.)"""
        with self._lock:
            entry = self._items.get(key)
            self._counted(entry)
            if entry is not None:
                entry.readers += 1
            return entry

    def release(self, entry: CachedWindow) -> None:
        """The caller no longer reads a shared window."""
        with self._lock:
            entry.readers -= 1

    def grow(
        self, key: Hashable, entry: CachedWindow, epoch: Hashable, add: Callable[[HistoryWindow], None]
    ) -> CachedWindow:
        """A shared `entry` (the caller one of its readers) with newer messages (`add`) under `epoch`:
        in place while the caller is its only reader, else in a copy that takes its place, so the
        other readers keep the window they read. The caller reads, and later releases, the one returned."""
        with self._lock:
            if entry.readers == 1:
                add(entry.window)
                entry.epoch = epoch
                if self._items.get(key) is entry:  # counted again at its new size
                    self._items[key] = entry
                return entry
        twin = CachedWindow(epoch, entry.window.copy())
        add(twin.window)
        twin.readers = 1
        with self._lock:
            entry.readers -= 1
            if self._items.get(key) in (None, entry) and _size(twin) <= self.max_bytes:
                self._items[key] = twin
        return twin

    def put(self, key: Hashable, entry: CachedWindow) -> None:
        """Keep a window (not when caching is off or it alone exceeds the budget)."""
        with self._lock:
            if self.max_bytes > 0 and _size(entry) <= self.max_bytes:
                self._items[key] = entry

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


history_cache = HistoryCache()


def configure_history_cache(max_mb: float) -> None:
    """Size the process's history cache from settings (`ORRERY_HISTORY_CACHE_MB`)."""
    history_cache.configure(max_mb)
