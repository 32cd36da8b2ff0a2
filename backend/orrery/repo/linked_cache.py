"""The linked-entity cache: bounded, per entity, and coherent across processes.

A `cachetools.TTLCache` keyed by entity id holds, per variant (limits, descriptions, filter), the
linked context and the entity's `graph_version` it was built at. A read counts only when the
entity's current version (loaded with the entity on every read) still matches, so a write committed
by any process invalidates the others on their next read (see `backend/orrery/repo/graph_versions.py`); the
writing process also drops its own entry at once. Size and lifetime are settings; a TTL of 0 turns
caching off.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Hashable
from typing import Any

from cachetools import TTLCache

DEFAULT_TTL_SECONDS = 60.0
DEFAULT_MAX_ENTITIES = 4096


class LinkedCache:
    """Thread-safe `entity id -> {variant: (graph version, value)}` with a size bound and a TTL."""

    def __init__(
        self,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        max_entities: int = DEFAULT_MAX_ENTITIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self.clock = clock
        self.hits = 0
        self.misses = 0
        self.configure(ttl_seconds, max_entities)

    def configure(self, ttl_seconds: float, max_entities: int) -> None:
        """Apply the settings (drops everything cached)."""
        with self._lock:
            self.ttl = ttl_seconds
            self.max_entities = max_entities
            self._items: TTLCache[uuid.UUID, dict[Hashable, tuple[int, Any]]] = TTLCache(
                maxsize=max(1, max_entities), ttl=max(ttl_seconds, 1e-9), timer=self.clock
            )

    def get(self, entity_id: uuid.UUID, variant: Hashable, version: int) -> Any | None:
        """The cached value built at `version`, or None (absent, expired, or built at another)."""
        with self._lock:
            entry = self._items.get(entity_id, {}).get(variant)
            if entry is None or entry[0] != version:
                self.misses += 1
                return None
            self.hits += 1
            return entry[1]

    def put(self, entity_id: uuid.UUID, variant: Hashable, version: int, value: Any) -> None:
        """Store a value built at `version` (a no-op when the TTL is zero)."""
        if self.ttl <= 0:
            return
        with self._lock:
            variants = self._items.get(entity_id)
            if variants is None or any(v != version for v, _ in variants.values()):
                variants = {}  # older versions are dead: start over
            variants[variant] = (version, value)
            self._items[entity_id] = variants

    def invalidate(self, *entity_ids: uuid.UUID) -> None:
        """Drop every cached variant of these entities (this process's own writes)."""
        with self._lock:
            for entity_id in entity_ids:
                self._items.pop(entity_id, None)

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


linked_cache = LinkedCache()
"""The process-wide linked-entity cache; `configure_linked_cache` applies the settings."""


def configure_linked_cache(ttl_seconds: float, max_entities: int = DEFAULT_MAX_ENTITIES) -> None:
    """Apply `ORRERY_LINKED_CACHE_TTL_SECONDS` (0 disables) and `ORRERY_LINKED_CACHE_SIZE`."""
    linked_cache.configure(ttl_seconds, max_entities)
