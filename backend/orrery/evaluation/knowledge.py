"""`orrery eval knowledge`: how well auto-context decides to load a knowledge packet.

The labelled set (`data/autoload_set.json`, frozen before the decision was tuned) holds first
messages over two knowledge bases: the demo's (Atlas 2.0 launch) and a differently worded clinic
scheduling KB (`data/second_kb.json`). Each KB is written to a fresh project of a real, migrated
database; each question is put to `auto_context` (the function a turn calls) on a new chat session
of that project, inside a savepoint that is rolled back, so questions never see each other.

A question counts as *loaded* when a packet with entries went into the turn (high, medium or low
confidence); a "the KB does not cover this" note is not a packet, nor is a low-confidence question
("which of these do you mean?", status `asked`), counted apart as `low (asked)`. Reported per KB and overall:
precision and recall of loading, the entry hit-rate of correct loads (at least one expected entry in
the packet), the share of named-entry questions answered as direct (medium or better), and the
confidence distribution for questions that should and should not load.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.demo import content
from orrery.errors import ValidationError
from orrery.knowledge.autocontext import auto_context
from orrery.repo import chat, identity, knowledge
from orrery.tokens import counter_for

PACKET_CONFIDENCE = ("high", "medium", "low")
HELD_OUT = "autoload_heldout.json"
"""Paraphrases and should-not messages written before the embedding signal was tuned, never looked
at while tuning: reported apart (`held_out`)."""
NON_DOMAIN = "autoload_non_domain.json"
"""Twenty non-domain first messages (issue 52), each put to both KBs: none may load anything."""
KINDS = ("demo", "clinic")


@dataclass(frozen=True)
class Question:
    """One labelled first message."""

    id: str
    kb: str
    kind: str
    text: str
    load: bool
    expect: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """What auto-context did with one question."""

    question: Question
    loaded: bool
    confidence: str
    codes: tuple[str, ...]
    status: str = "skipped"
    """What auto-context did: `loaded` (a packet or a "not covered" note), `asked`, `skipped`."""

    @property
    def hit(self) -> bool:
        """A correct load whose packet holds at least one expected entry."""
        return self.loaded and bool(set(self.codes) & set(self.question.expect))


def _data(name: str) -> Any:
    return json.loads(resources.files("orrery.evaluation").joinpath("data", name).read_text("utf-8"))


def load_questions(path: Path | None = None, name: str = "autoload_set.json") -> list[Question]:
    """The frozen labelled set (or its held-out part, `HELD_OUT`, or another file of the same shape)."""
    try:
        raw = json.loads(path.read_text("utf-8")) if path else _data(name)
        return [
            Question(q["id"], q["kb"], q["kind"], q["text"], bool(q["load"]), tuple(q["expect"]))
            for q in raw["questions"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"cannot read the labelled set {str(path)!r}: {exc}") from None


def knowledge_bases() -> dict[str, dict[str, Any]]:
    """Both KBs in one shape: collections, entries (code, slug, name, description, paths), relations."""
    demo = {
        "collections": content.COLLECTIONS,
        "entries": [(code, *rest) for code, rest in content.KB_ENTRIES.items()],
        "relations": content.KB_RELATIONS,
    }
    return {"demo": demo, "clinic": _data("second_kb.json")}


async def _write_kb(db: Database, user_id: uuid.UUID, name: str, kb: dict[str, Any]) -> uuid.UUID:
    async with db.transaction() as s:
        project = await identity.create_project(s, user_id, f"eval: {name}")
        cols = {}
        for slug, title, description in kb["collections"]:
            col = await knowledge.create_collection(
                s, user_id, project.id, slug, title, description=description
            )
            cols[slug] = col.id
        ids = {}
        for code, slug, title, description, paths in kb["entries"]:
            entry = await knowledge.create_entry(
                s, user_id, cols[slug], code, title, description, {"code_paths": list(paths)}
            )
            ids[code] = entry.id
        for src, rel, dst in kb["relations"]:
            await knowledge.relate_entries(s, user_id, ids[src], rel, ids[dst])
        return project.id


async def run_questions(db: Database, questions: list[Question]) -> list[Outcome]:
    """Every question through `auto_context` on a fresh session of its KB's project."""
    async with db.transaction() as s:
        user = await identity.create_user(s, f"eval-{uuid.uuid4().hex[:8]}@eval.invalid", "Eval")
        user_id = user.id
    projects = {name: await _write_kb(db, user_id, name, kb) for name, kb in knowledge_bases().items()}
    counter = counter_for("offline")
    outcomes = []
    for q in questions:
        if q.kb not in projects:
            raise ValidationError(f"question {q.id}: unknown knowledge base {q.kb!r}")
        async with db.transaction() as s:
            savepoint = await s.begin_nested()
            c = await chat.create_session(s, user_id, project_id=projects[q.kb])
            decision = await auto_context(s, user_id, c, q.text, counter)
            await savepoint.rollback()
        loaded = decision.status == "loaded" and decision.confidence in PACKET_CONFIDENCE
        label = "low (asked)" if decision.status == "asked" else decision.confidence or decision.status
        outcomes.append(Outcome(q, loaded, label, decision.codes, decision.status))
    return outcomes


def non_domain_questions() -> list[Question]:
    """Each non-domain message once per KB (labelled: load nothing)."""
    raw = _data(NON_DOMAIN)["messages"]
    return [Question(f"{m['id']}-{kb}", kb, m["kind"], m["text"], False, ()) for kb in KINDS for m in raw]


def non_domain_report(outcomes: list[Outcome]) -> dict[str, Any]:
    """How many runs of the non-domain messages put anything in the prompt: a packet (loaded or
    asked about), or a note that the KB does not cover this."""
    packets = [o for o in outcomes if o.codes and o.status in ("loaded", "asked")]
    notes = [o for o in outcomes if o.status == "loaded" and not o.codes]
    return {
        "messages": len({o.question.text for o in outcomes}),
        "runs": len(outcomes),
        "packets": len(packets),
        "notes": len(notes),
        "wrong": [_wrong(o) | {"status": o.status} for o in [*packets, *notes]],
    }


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """Precision, recall, hit-rate, named-as-direct and confidence counts for a group of outcomes."""
    tp = sum(o.loaded and o.question.load for o in outcomes)
    fp = sum(o.loaded and not o.question.load for o in outcomes)
    fn = sum(not o.loaded and o.question.load for o in outcomes)
    named = [o for o in outcomes if o.question.kind == "named"]
    return {
        "questions": len(outcomes),
        "should_load": sum(o.question.load for o in outcomes),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "hit_rate": _ratio(sum(o.hit for o in outcomes if o.question.load), tp),
        "named_direct": _ratio(sum(o.confidence in ("high", "medium") for o in named), len(named)),
        "confidence": {
            "should_load": dict(Counter(o.confidence for o in outcomes if o.question.load)),
            "should_not": dict(Counter(o.confidence for o in outcomes if not o.question.load)),
        },
    }


def report(outcomes: list[Outcome]) -> dict[str, Any]:
    """Per KB and overall, plus every wrong decision or missed entry (for reading, not scoring)."""
    groups = {
        kb: [o for o in outcomes if o.question.kb == kb]
        for kb in dict.fromkeys(o.question.kb for o in outcomes)
    }
    wrong = [_wrong(o) for o in outcomes if o.loaded != o.question.load or (o.question.load and not o.hit)]
    return {
        "overall": summarize(outcomes),
        "by_kb": {k: summarize(v) for k, v in groups.items()},
        "wrong": wrong,
    }


def _wrong(o: Outcome) -> dict[str, Any]:
    expected: Any = list(o.question.expect) if o.question.load else "skip"
    return {"id": o.question.id, "text": o.question.text, "expected": expected, "confidence": o.confidence,
            "codes": list(o.codes)}  # fmt: skip


def run_knowledge_eval(
    settings: Settings, database_url: str | None = None, questions_file: Path | None = None
) -> dict[str, Any]:
    """Run on `database_url`, or on a fresh SQLite file that is deleted afterwards. The frozen set's
    held-out part is run too and reported apart (not with another questions file)."""
    questions = load_questions(questions_file)
    held_out = [] if questions_file else load_questions(name=HELD_OUT)
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"
        from orrery.db.migrations import upgrade

        upgrade(url)
        return asyncio.run(_run(settings.model_copy(update={"database_url": url}), questions, held_out))


async def _run(settings: Settings, questions: list[Question], held_out: list[Question]) -> dict[str, Any]:
    db = Database.from_settings(settings)
    try:
        result = report(await run_questions(db, questions))
        if held_out:
            result["held_out"] = report(await run_questions(db, held_out))
            result["non_domain"] = non_domain_report(await run_questions(db, non_domain_questions()))
        return result
    finally:
        await db.dispose()
