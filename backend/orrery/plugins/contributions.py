"""What plugins contribute: the kinds, where they are found (entry points, `ORRERY_PLUGINS` modules),
and the record of what this process registered."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

from orrery.errors import ConfigurationError

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


RENAMED = {"backend": "orrery", "tools": "orrery.tools"}
"""Orrery's import names before 0.1 -> now: a plugin written against them fails to import."""


class PluginError(ConfigurationError):
    """A plugin cannot be loaded; the message names the plugin and what to fix."""


def _import_failure(exc: Exception) -> str:
    """Why a plugin module failed to import, with the fix when it still uses Orrery's old names."""
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    old = (missing or "").partition(".")[0]
    if old not in RENAMED:
        return str(exc)
    return (
        f"{exc} (Orrery's package is named orrery now: rename imports of {old}.* to {RENAMED[old]}.*, "
        f"e.g. `from {RENAMED[old]}{missing[len(old) :] if missing else ''} import ...`)"
    )


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
                raise PluginError(
                    f"plugin {plugin!r}: {source} cannot be imported: {_import_failure(exc)}"
                ) from exc
            found.append(Candidate(plugin, kind, source, obj))
    return found


def _from_module(name: str) -> list[Candidate]:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        raise PluginError(
            f"plugin {name!r} (ORRERY_PLUGINS) cannot be imported: {_import_failure(exc)}"
        ) from exc
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


_registered: list[Contribution] | None = None


def loaded() -> list[Contribution]:
    """What `ensure_plugins` registered in this process so far (nothing before it ran)."""
    return list(_registered or [])


def record(contributions: list[Contribution]) -> None:
    """Remember what was registered (read by `loaded` and the dry-run validation)."""
    global _registered
    _registered = contributions
