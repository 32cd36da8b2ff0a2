"""`orrery eval facts`: the frozen facts probe set through the real turn path.

Each probe (`evaluation/data/facts_probes.json`, frozen before anything was tuned) is a fresh person
in a fresh project. Its chats run in order through `Orchestrator.turn` (the offline model by
default, which calls `remember_fact` / `forget_fact` as a real model would); the chats it names are
then forgotten with their facts (`forget_chat`); finally a new chat is opened and its working
context assembled (the function a turn calls). Checks, reported per slice (knowledge updates are
their own): a `current` fact is shown once as current; a `not_current` one (replaced) is not shown;
a `gone` one is nowhere in the stored facts or the facts shown; an `unseen` one (said in a
forgotten or "don't remember" chat) is nowhere in what the model sees.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.context.instructions import TITLE as STANDING_TITLE
from orrery.context.working_context import WorkingContext, assemble_working_context
from orrery.db.engine import Database
from orrery.errors import ValidationError
from orrery.memory.injection import FACTS_TITLE
from orrery.repo import chat, facts, identity
from orrery.services.forget import forget_chat

PROBES = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "facts_probes.json"
CHECKS = ("current", "not_current", "gone", "unseen")
FINAL_QUESTION = "What do you remember about me?"


@dataclass(frozen=True)
class Check:
    """One check of one probe."""

    probe: str
    slice: str
    kind: str
    text: str
    passed: bool


def load_probes(path: Path | None = None) -> list[dict[str, Any]]:
    """The probes of the frozen set (or another file of the same shape)."""
    try:
        data = json.loads((path or PROBES).read_text(encoding="utf-8"))
        probes = data["probes"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"cannot read the probe set {str(path or PROBES)!r}: {exc}") from None
    return list(probes)


def facts_shown(prompt: str) -> str:
    """The Remembered Facts and Standing Instructions sections of a system prompt ('' when there
    are none): what the model is shown as remembered and current."""
    parts = []
    for title in (FACTS_TITLE, STANDING_TITLE):
        head = f"## {title}"
        if head in prompt:
            parts.append(prompt.split(head, 1)[1].split("\n\n## ", 1)[0])
    return "\n".join(parts)


async def _run_chats(db: Database, orch: Orchestrator, probe: dict[str, Any]) -> uuid.UUID:
    async with db.transaction() as s:
        user = await identity.create_user(s, f"probe-{uuid.uuid4().hex[:12]}@example.org", "Probe")
        project = await identity.create_project(s, user.id, f"Probe {probe['id']}")
    chats = []
    for spec in probe["chats"]:
        async with db.transaction() as s:
            record = await chat.create_session(s, user.id, project_id=project.id)
            record.remember = bool(spec.get("remember", True))
        chats.append(record.id)
        for text in spec["say"]:
            async for _ in orch.turn(user.id, record.id, text):
                pass
    for index in probe.get("forget_chats", []):
        async with db.transaction() as s:
            await forget_chat(s, orch.settings, user.id, chats[index], forget_facts=True)
    return user.id


async def _final_view(
    db: Database, settings: Settings, user_id: uuid.UUID
) -> tuple[WorkingContext, list[str]]:
    async with db.transaction() as s:
        project = (await identity.list_projects(s, user_id))[0]
        record = await chat.create_session(s, user_id, project_id=project.id)
        stored = [f.text for f in await facts.list_facts(s, user_id, history=True)]
        view = await assemble_working_context(
            s, agent="coach", session_id=record.id, user_id=user_id, settings=settings, query=FINAL_QUESTION
        )
    return view, stored


def _checks(
    probe: dict[str, Any], view: WorkingContext, stored: list[str], current: list[str]
) -> list[Check]:
    shown = facts_shown(view.system_prompt).lower()
    seen = " ".join([view.system_prompt, *(m["content"] for m in view.messages)]).lower()

    def verdict(kind: str, text: str) -> bool:
        t = text.lower()
        if kind == "current":
            return t in shown and sum(t in c.lower() for c in current) == 1
        if kind == "not_current":
            return t not in shown and not any(t in c.lower() for c in current)
        if kind == "gone":
            return t not in shown and not any(t in f.lower() for f in stored)
        return t not in seen  # unseen

    return [
        Check(probe["id"], probe["slice"], kind, text, verdict(kind, text))
        for kind in CHECKS
        for text in probe.get(kind, [])
    ]


async def run_probes(db: Database, settings: Settings, probes: list[dict[str, Any]]) -> list[Check]:
    """Every probe through the turn path, then its checks."""
    orch = Orchestrator(db, settings)
    out: list[Check] = []
    try:
        for probe in probes:
            user_id = await _run_chats(db, orch, probe)
            view, stored = await _final_view(db, settings, user_id)
            async with db.sessions() as s:
                current = [f.text for f in await facts.list_facts(s, user_id)]
            out.extend(_checks(probe, view, stored, current))
    finally:
        await orch.close()
    return out


def report(checks: list[Check]) -> dict[str, Any]:
    """Passed checks and probes per slice and overall, with every failed check named."""
    slices: dict[str, list[Check]] = defaultdict(list)
    for c in checks:
        slices[c.slice].append(c)

    def score(group: list[Check]) -> dict[str, Any]:
        probes = {c.probe for c in group}
        failed_probes = {c.probe for c in group if not c.passed}
        return {
            "checks": len(group),
            "passed": sum(c.passed for c in group),
            "score": round(sum(c.passed for c in group) / len(group), 4) if group else None,
            "probes": len(probes),
            "probes_passed": len(probes - failed_probes),
        }

    newer = [c for c in checks if c.slice in ("update", "restated")]
    leaks = [c for c in checks if c.kind in ("gone", "unseen")]
    return {
        "slices": {name: score(group) for name, group in sorted(slices.items())},
        "overall": score(checks),
        "newer_fact_wins": score(newer),
        "nothing_forgotten_comes_back": score(leaks),
        "failed": [vars(c) for c in checks if not c.passed],
    }


def run_facts_eval(
    settings: Settings,
    database_url: str | None = None,
    probes_file: Path | None = None,
    model: str = "offline",
) -> dict[str, Any]:
    """Run on `database_url`, or on a fresh SQLite file that is deleted afterwards."""
    probes = load_probes(probes_file)
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'facts.db'}"
        from orrery.db.migrations import upgrade

        upgrade(url)
        chosen = settings.model_copy(update={"database_url": url, "model": model})
        return asyncio.run(_run(chosen, probes))


async def _run(settings: Settings, probes: list[dict[str, Any]]) -> dict[str, Any]:
    db = Database.from_settings(settings)
    try:
        return report(await run_probes(db, settings, probes))
    finally:
        await db.dispose()
