"""A per-process TTL cache for linked-entity context, invalidated by edge writes.

Keys start with the entity id, so one call drops every cached variant (limits, descriptions) of an
entity. The repository invalidates both ends whenever it creates or deletes an edge, and the
neighbours of an entity it updates or deletes. Other processes see changes after at most the TTL.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Hashable
from typing import Any


class TTLCache:
    """Thread-safe mapping of `(entity_id, *variant)` to a value that expires after `ttl` seconds."""

    def __init__(self, ttl_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl_seconds
        self.clock = clock
        self._items: dict[tuple[uuid.UUID, Hashable], tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, entity_id: uuid.UUID, variant: Hashable) -> Any | None:
        """The cached value, or None when absent or expired."""
        with self._lock:
            item = self._items.get((entity_id, variant))
            if item is None or self.clock() - item[0] > self.ttl:
                self._items.pop((entity_id, variant), None)
                self.misses += 1
                return None
            self.hits += 1
            return item[1]

    def put(self, entity_id: uuid.UUID, variant: Hashable, value: Any) -> None:
        """Store a value (a no-op when the TTL is zero, which disables caching)."""
        if self.ttl <= 0:
            return
        with self._lock:
            self._items[(entity_id, variant)] = (self.clock(), value)

    def invalidate(self, *entity_ids: uuid.UUID) -> None:
        """Drop every cached variant of these entities."""
        wanted = set(entity_ids)
        with self._lock:
            for key in [k for k in self._items if k[0] in wanted]:
                del self._items[key]

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._items.clear()


linked_cache = TTLCache()
"""The process-wide linked-entity cache; `configure_linked_cache` applies the TTL setting."""


def configure_linked_cache(ttl_seconds: float) -> None:
    """Apply `ORRERY_LINKED_CACHE_TTL_SECONDS` (0 disables caching)."""
    linked_cache.ttl = ttl_seconds
    linked_cache.clear()
