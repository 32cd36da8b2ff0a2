"""`orrery eval offline`: the frozen demo question set through the real turn path.

Each question (`evaluation/data/demo_questions.json`, frozen before the offline model was tuned)
runs in a new chat of the demo workspace, in the focus it was asked in (an entity named by kind and
name, or none; the `empty` project: a project of the demo user with no knowledge base), with the
agent it names, after any messages it says come first. The reply scores the share of its `facts`
it contains (and of its `absent` strings it does not); a reply showing raw tool JSON scores 0. The
set has a `tuning` part and a `held_out` part, scored apart.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Entity
from orrery.demo.workspace import DemoWorkspace, load_demo
from orrery.errors import ValidationError
from orrery.repo import chat, identity

QUESTIONS = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "demo_questions.json"
PARTS = ("tuning", "held_out")
RAW_JSON = re.compile(r'\{\s*"[A-Za-z_]+"\s*:')
"""Tool JSON shown as prose (`{"error": ...}`): the reply scores 0 (quoted source in fenced blocks,
as `get_context_for_story` returns it, is not prose)."""
FENCED = re.compile(r"```.*?```", re.S)


def shows_raw_json(reply: str) -> bool:
    """Whether the reply shows tool JSON outside fenced code blocks."""
    return bool(RAW_JSON.search(FENCED.sub("", reply)))


@dataclass(frozen=True)
class Scored:
    """One question's reply and score."""

    part: str
    id: str
    question: str
    reply: str
    found: int
    checks: int
    raw_json: bool

    @property
    def missing(self) -> bool:
        return self.raw_json or self.found < self.checks


def load_questions(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """The parts of the frozen set (or another file of the same shape)."""
    try:
        data = json.loads((path or QUESTIONS).read_text(encoding="utf-8"))
        parts = {name: list(data[name]) for name in PARTS if name in data}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"cannot read the question set {str(path or QUESTIONS)!r}: {exc}") from None
    if not parts:
        raise ValidationError(f"the question set has none of the parts {', '.join(PARTS)}")
    return parts


def score(part: str, question: dict[str, Any], reply: str) -> Scored:
    """Facts contained and `absent` strings not contained, case-insensitively; raw JSON scores 0."""
    text = reply.lower()
    facts = [str(f) for f in question.get("facts", [])]
    absent = [str(a) for a in question.get("absent", [])]
    found = sum(f.lower() in text for f in facts) + sum(a.lower() not in text for a in absent)
    raw = shows_raw_json(reply)
    checks = len(facts) + len(absent)
    return Scored(part, question["id"], question["question"], reply, 0 if raw else found, checks, raw)


async def _focus(db: Database, demo: DemoWorkspace, focus: dict[str, str] | None) -> dict[str, Any]:
    if not focus:
        return {"project_id": demo.project_id}
    if focus.get("project") == "empty":
        async with db.transaction() as s:
            project = await identity.create_project(s, demo.user_id, f"Empty {uuid.uuid4().hex[:8]}")
        return {"project_id": project.id}
    async with db.sessions() as s:
        ident = (
            await s.execute(
                select(Entity.id).where(
                    Entity.project_id == demo.project_id,
                    Entity.kind == focus["kind"],
                    Entity.name == focus["name"],
                )
            )
        ).scalar_one()
    return {"project_id": demo.project_id, "focus_kind": focus["kind"], "focus_id": ident}


async def ask(db: Database, orch: Orchestrator, demo: DemoWorkspace, question: dict[str, Any]) -> str:
    """The reply to one question in a new chat of its focus (after its `before` messages)."""
    where = await _focus(db, demo, question.get("focus"))
    async with db.transaction() as s:
        record = await chat.create_session(s, demo.user_id, **where)
    reply = ""
    for text in [*question.get("before", []), question["question"]]:
        async for event in orch.turn(demo.user_id, record.id, text, agent=question.get("agent")):
            if event.type == "done":
                reply = str(event.data["reply"])
            elif event.type == "error":
                reply = f"(turn failed: {event.data.get('message')})"
    return reply


async def run_questions(
    db: Database, settings: Settings, parts: dict[str, list[dict[str, Any]]]
) -> list[Scored]:
    """Every question of every part on the demo workspace, scored."""
    demo = await load_demo(db, settings.secret_key)
    orch = Orchestrator(db, settings)
    scored: list[Scored] = []
    try:
        for part, questions in parts.items():
            for question in questions:
                scored.append(score(part, question, await ask(db, orch, demo, question)))
    finally:
        await orch.close()
    return scored


def report(scored: list[Scored]) -> dict[str, Any]:
    """Facts found of required, per part and overall, with each question that missed one."""

    def total(group: list[Scored]) -> dict[str, Any]:
        checks = sum(s.checks for s in group)
        found = sum(s.found for s in group)
        return {
            "questions": len(group),
            "questions_full": sum(not s.missing for s in group),
            "facts": checks,
            "found": found,
            "raw_json": sum(s.raw_json for s in group),
            "score": round(found / checks, 4) if checks else None,
        }

    parts = {p: total([s for s in scored if s.part == p]) for p in dict.fromkeys(s.part for s in scored)}
    return {
        "parts": parts,
        "overall": total(scored),
        "missed": [
            {
                "part": s.part,
                "id": s.id,
                "question": s.question,
                "found": s.found,
                "checks": s.checks,
                "raw_json": s.raw_json,
                "reply": s.reply,
            }
            for s in scored
            if s.missing
        ],
    }


def run_offline_eval(
    settings: Settings,
    database_url: str | None = None,
    questions_file: Path | None = None,
    model: str = "offline",
    parts: tuple[str, ...] = PARTS,
) -> dict[str, Any]:
    """Run on `database_url` (the demo workspace is loaded into it), or on a fresh SQLite file."""
    chosen_parts = {k: v for k, v in load_questions(questions_file).items() if k in parts}
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'offline.db'}"
        from orrery.db.migrations import upgrade

        upgrade(url)
        chosen = settings.model_copy(update={"database_url": url, "model": model})
        return asyncio.run(_run(chosen, chosen_parts))


async def _run(settings: Settings, parts: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    db = Database.from_settings(settings)
    try:
        return report(await run_questions(db, settings, parts))
    finally:
        await db.dispose()
