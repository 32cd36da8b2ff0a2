"""Expertise modules: markdown files in `prompts/expertise/` with front matter.

```
---
title: Goal setting (SMART and WOOP)
agents: [goal_architect, coach]
when: The user sets, sharpens or doubts a goal.
keywords: [goal, smart, woop, target, deadline, measure]
priority: 10
engagement: [new, returning]   # optional: only for users with these statuses
---
body in markdown
```

Modules are parsed once per process (and again when a file changes), filtered per agent, ranked
by keyword overlap with the current message and then by priority, and included whole within the
expertise budget.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from orrery.errors import ConfigurationError
from orrery.resources import prompts_dir
from orrery.text import tokenize

EXPERTISE_DIR = prompts_dir("expertise")
EXTRA_DIRS: list[Path] = []
"""Plugins' expertise directories (`orrery.plugins` appends them at startup)."""


@dataclass(frozen=True)
class ExpertiseModule:
    """One module: who uses it, when, and its text."""

    slug: str
    title: str
    agents: tuple[str, ...]
    when: str
    keywords: tuple[str, ...]
    priority: int
    body: str
    engagement: tuple[str, ...] = ()
    """When set, the module is used only for users with one of these engagement statuses."""

    def render(self) -> str:
        """The module as it appears in the system prompt."""
        return f"### {self.title}\n_Use when: {self.when}_\n\n{self.body.strip()}"


def _parse(path: Path) -> ExpertiseModule:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ConfigurationError(f"expertise module {path.name!r} has no front matter")
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front) or {}
    missing = {"title", "agents", "when"} - set(meta)
    if missing:
        raise ConfigurationError(f"expertise module {path.name!r} misses {', '.join(sorted(missing))}")
    return ExpertiseModule(
        slug=path.stem,
        title=str(meta["title"]),
        agents=tuple(str(a) for a in meta["agents"]),
        when=str(meta["when"]),
        keywords=tuple(str(k).lower() for k in meta.get("keywords", [])),
        priority=int(meta.get("priority", 50)),
        body=body,
        engagement=tuple(str(e) for e in meta.get("engagement", [])),
    )


@lru_cache(maxsize=4)
def _load(directory: Path, stamp: tuple[tuple[str, float], ...]) -> tuple[ExpertiseModule, ...]:
    return tuple(_parse(directory / name) for name, _ in stamp)


def load_modules(directory: Path = EXPERTISE_DIR) -> tuple[ExpertiseModule, ...]:
    """Every module in the directory (cached until a file is added, removed or edited). Checked on
    each turn with one directory scan and a stat per file; `os.scandir`, not `Path.glob`, which
    builds a path object per file."""
    try:
        with os.scandir(directory) as entries:
            stamp = tuple(
                sorted((e.name, e.stat().st_mtime) for e in entries if e.name.endswith(".md") and e.is_file())
            )
    except FileNotFoundError:  # a plugin's folder that is not there: no modules, as before
        stamp = ()
    return _load(directory, stamp)


def modules_for(
    agent: str, query: str | None = None, engagement: str | None = None, directory: Path = EXPERTISE_DIR
) -> list[ExpertiseModule]:
    """The agent's modules, most useful first: keyword overlap with `query`, then priority."""
    words = set(tokenize(query or ""))
    found = load_modules(directory)
    if directory == EXPERTISE_DIR:
        found += tuple(m for extra in EXTRA_DIRS for m in load_modules(extra))
    mine = [
        m
        for m in found
        if (agent in m.agents or "*" in m.agents) and (not m.engagement or engagement in m.engagement)
    ]
    return sorted(mine, key=lambda m: (-len(words & set(m.keywords)), -m.priority, m.slug))
