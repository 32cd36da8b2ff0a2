"""Find plugin contributions, validate them all, then register them once per process."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Literal

from backend.errors import ConfigurationError

if TYPE_CHECKING:
    from backend.config import Settings

Kind = Literal["strategy", "tool", "agent", "expertise"]
ENTRY_POINT_GROUPS: dict[str, Kind] = {
    "orrery.strategies": "strategy",
    "orrery.tools": "tool",
    "orrery.agents": "agent",
    "orrery.expertise": "expertise",
}
MODULE_ATTRIBUTES: dict[str, Kind] = {
    "strategies": "strategy",
    "tools": "tool",
    "agents": "agent",
    "expertise": "expertise",
}


class PluginError(ConfigurationError):
    """A plugin cannot be loaded; the message names the plugin and what to fix."""


@dataclass(frozen=True)
class Candidate:
    """One contributed object, before validation."""

    plugin: str
    kind: Kind
    source: str
    obj: Any


@dataclass(frozen=True)
class Contribution:
    """A validated contribution: what `orrery plugins` and the API list."""

    plugin: str
    kind: Kind
    name: str
    source: str
    description: str
    payload: Any = None


def _from_entry_points() -> list[Candidate]:
    found: list[Candidate] = []
    for group, kind in ENTRY_POINT_GROUPS.items():
        for ep in sorted(entry_points(group=group), key=lambda e: (e.dist.name if e.dist else "", e.name)):
            plugin = ep.dist.name if ep.dist else ep.module
            source = f"entry point {group}: {ep.name} = {ep.value}"
            try:
                obj = ep.load()
            except Exception as exc:
                raise PluginError(f"plugin {plugin!r}: {source} cannot be imported: {exc}") from exc
            found.append(Candidate(plugin, kind, source, obj))
    return found


def _from_module(name: str) -> list[Candidate]:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        raise PluginError(f"plugin {name!r} (ORRERY_PLUGINS) cannot be imported: {exc}") from exc
    found: list[Candidate] = []
    for attribute, kind in MODULE_ATTRIBUTES.items():
        for obj in getattr(module, attribute, None) or ():
            found.append(Candidate(name, kind, f"ORRERY_PLUGINS {name}.{attribute}", obj))
    if not found:
        raise PluginError(f"plugin {name!r} (ORRERY_PLUGINS) defines none of {', '.join(MODULE_ATTRIBUTES)}")
    return found


def discover(modules: Iterable[str], *, use_entry_points: bool = True) -> list[Candidate]:
    """Every contributed object: installed entry points, then the named modules."""
    found = _from_entry_points() if use_entry_points else []
    seen_modules: set[str] = set()
    for name in (m.strip() for m in modules):
        if name and name not in seen_modules:
            seen_modules.add(name)
            found.extend(_from_module(name))
    return _without_duplicates(found)


def _without_duplicates(found: list[Candidate]) -> list[Candidate]:
    """A package both installed and named in ORRERY_PLUGINS contributes its objects once."""
    unique: list[Candidate] = []
    ids: set[tuple[str, int]] = set()
    for cand in found:
        key = (cand.kind, id(cand.obj))
        if key not in ids:
            ids.add(key)
            unique.append(cand)
    return unique


def plan_plugins(modules: Iterable[str] = (), *, use_entry_points: bool = True) -> list[Contribution]:
    """Discover and validate (nothing is registered): raises `PluginError` on the first problem."""
    from backend.plugins.validate import validate_all

    return validate_all(discover(modules, use_entry_points=use_entry_points))


def register(contributions: list[Contribution]) -> None:
    """Add validated contributions to the registries the built-ins live in."""
    from backend.agents.definitions import AGENTS
    from backend.memory import expertise
    from backend.memory.scoping.base import register_strategy
    from tools.registry import REGISTRY

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


def loaded() -> list[Contribution]:
    """What `ensure_plugins` registered in this process so far (nothing before it ran)."""
    return list(_loaded or [])


def ensure_plugins(settings: Settings | None = None) -> list[Contribution]:
    """Load every plugin once per process (later calls return the same list, or the same error)."""
    global _loaded, _failed
    with _lock:
        if _failed is not None:
            raise _failed
        if _loaded is None:
            from backend.config import get_settings

            configured = (settings or get_settings()).plugins.split(",")
            try:
                planned = plan_plugins(configured)
            except PluginError as exc:
                _failed = exc
                raise
            register(planned)
            _loaded = planned
        return _loaded
