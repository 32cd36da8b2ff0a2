"""Find plugin contributions, validate them all, then register them once per process (called by the
composition root, `orrery.app`)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from orrery.plugins.contributions import Contribution, PluginError, discover, record

if TYPE_CHECKING:
    from orrery.config import Settings


def plan_plugins(modules: Iterable[str] = (), *, use_entry_points: bool = True) -> list[Contribution]:
    """Discover and validate (nothing is registered): raises `PluginError` on the first problem."""
    from orrery.plugins.validate import validate_all

    return validate_all(discover(modules, use_entry_points=use_entry_points))


def register(contributions: list[Contribution]) -> None:
    """Add validated contributions to the registries the built-ins live in."""
    from orrery.memory import expertise
    from orrery.memory.scoping.base import register_strategy
    from orrery.roster import AGENTS
    from orrery.tools.registry import REGISTRY

    for c in contributions:
        if c.kind == "strategy":
            register_strategy(c.payload)
        elif c.kind == "tool":
            REGISTRY[c.name] = c.payload
        elif c.kind == "agent":
            AGENTS[c.name] = c.payload
        elif c.payload not in expertise.EXTRA_DIRS:
            expertise.EXTRA_DIRS.append(c.payload)


_lock = threading.Lock()
_loaded: list[Contribution] | None = None
_failed: PluginError | None = None


def ensure_plugins(settings: Settings | None = None) -> list[Contribution]:
    """Load every plugin once per process (later calls return the same list, or the same error)."""
    global _loaded, _failed
    with _lock:
        if _failed is not None:
            raise _failed
        if _loaded is None:
            from orrery.config import get_settings

            configured = (settings or get_settings()).plugins.split(",")
            try:
                planned = plan_plugins(configured)
            except PluginError as exc:
                _failed = exc
                raise
            register(planned)
            record(planned)
            _loaded = planned
        return _loaded
