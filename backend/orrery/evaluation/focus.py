"""`orrery eval focus`: what recall's same-entity boost is worth, on a synthetic project the dev
conversations cannot give (they have one project and no focused chats).

One person, one project, `ENTITIES` tasks, two chats focused on each. Every task's chats talk about the
same subjects (a deadline, a contact, a budget, a draft, a meeting) with its own details, so words
alone cannot tell whose deadline a message is. Questions come from a new chat focused on one task:
- **same task**: "When is the deadline now?", whose evidence is in that task's chats;
- **other task, named**: "What is Birch's budget?" asked from another task's chat, whose evidence (it
  names Birch) is in Birch's chats; the boost works against it.
Printed: the share of questions whose evidence is in the recalled section, per boost and cap.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.evaluation.memory_measures import letters_and_digits

ENTITIES = (
    "Acme",
    "Birch",
    "Cobalt",
    "Delta",
    "Ember",
    "Fjord",
    "Garnet",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Linden",
    "Maple",
    "Nimbus",
    "Onyx",
    "Pebble",
    "Quartz",
    "Raven",
    "Sable",
    "Tundra",
    "Umber",
    "Vesper",
    "Willow",
    "Yarrow",
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
PEOPLE = ("Maria", "Tom", "Aiko", "Sven", "Leila", "Omar", "Greta", "Ravi", "Nina", "Paul", "Ines", "Jonas")
NEEDS = ("charts", "a summary", "photos", "references", "a glossary", "quotes", "a timeline", "sketches")
SUBJECTS = {  # subject: (the fact, as the person states it; the same-task question)
    "deadline": ("For {name}, the deadline moved to {day} the {n}th.", "When is the deadline now?"),
    "contact": ("At {name} the contact is {person}; call before noon.", "Who is the contact there?"),
    "budget": ("The {name} budget is {k} thousand euros in all.", "What is the budget?"),
    "draft": ("The {name} draft needs {need} before the review.", "What does the draft need before review?"),
    "meeting": ("The {name} meeting is at {h} o'clock in room {r}.", "When and where is the meeting?"),
}
NAMED = {
    "deadline": "When is {name}'s deadline now?",
    "contact": "Who is the contact at {name}?",
    "budget": "What is {name}'s budget?",
    "draft": "What does the {name} draft need?",
    "meeting": "When is the {name} meeting?",
}
CONTEXT = " We went through it together and agreed to look at it again after the next review."
"""Said with every fact, as people say more than the fact itself (so the cap binds)."""
FILLER = ("Thanks, that helps.", "Noted.", "Let's keep going with the next step.", "Good, carry on.")
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


@dataclass
class World:
    """The person, their project, each task's id and each (task, subject)'s stated fact."""

    user_id: uuid.UUID
    project_id: uuid.UUID
    tasks: dict[str, uuid.UUID] = field(default_factory=dict)
    facts: dict[tuple[str, str], str] = field(default_factory=dict)


def _fact(template: str, name: str, rng: random.Random) -> str:
    return template.format(
        name=name,
        day=rng.choice(DAYS),
        n=rng.randint(2, 28),
        person=rng.choice(PEOPLE),
        k=rng.randint(10, 90),
        need=rng.choice(NEEDS),
        h=rng.randint(8, 17),
        r=rng.randint(100, 499),
    )


async def build(db: Database, seed: int = 5) -> World:
    """The synthetic project through the normal message path (each task's facts split over its two
    chats, between filler turns)."""
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage, create_session
    from orrery.repo.graph import EntitySpec, create_entity
    from orrery.repo.identity import create_project, create_user

    rng = random.Random(seed)
    async with db.transaction() as s:
        user = await create_user(s, f"focus-{uuid.uuid4().hex[:8]}@example.org", "Eval")
        project = await create_project(s, user.id, "Clients")
        world = World(user.id, project.id)
        for i, name in enumerate(ENTITIES):
            task = await create_entity(s, user.id, project.id, EntitySpec(kind="task", name=f"{name} job"))
            world.tasks[name] = task.id
            subjects = list(SUBJECTS)
            for c, half in enumerate((subjects[:3], subjects[3:])):
                chat = await create_session(
                    s,
                    user.id,
                    project_id=project.id,
                    focus_kind="task",
                    focus_id=task.id,
                    title=f"{name} {c + 1}",
                )
                day = START + timedelta(days=2 * i + c)
                lines: list[tuple[str, str]] = []
                for subject in half:
                    world.facts[(name, subject)] = _fact(SUBJECTS[subject][0], name, rng) + CONTEXT
                    lines += [("user", world.facts[(name, subject)]), ("assistant", rng.choice(FILLER))]
                    lines += [("user", rng.choice(FILLER)), ("assistant", rng.choice(FILLER))]
                chat.created_at = chat.updated_at = day
                for k, (role, line) in enumerate(lines):
                    await append_message(
                        s, user.id, chat.id, NewMessage(role, line, created_at=day + timedelta(minutes=k))
                    )
    return world


@contextmanager
def entity_boost(value: float) -> Iterator[None]:
    """Recall's same-entity boost set to `value` for the duration (the measurement's one knob)."""
    from orrery.memory.recall import ranked

    before = ranked.ENTITY_BOOST
    ranked.ENTITY_BOOST = value
    try:
        yield
    finally:
        ranked.ENTITY_BOOST = before


async def _found(
    db: Database, world: World, settings: Settings, asked_in: str, question: str, fact: str, cap: int
) -> bool:
    """Whether `fact` is in what recall gives a new chat focused on `asked_in` at `cap`."""
    from orrery.memory.recall import RecallRequest, Scope, fit, gather
    from orrery.tokens import counter_for

    request = RecallRequest(
        Scope(world.user_id, uuid.uuid4(), world.project_id), ("task", world.tasks[asked_in]), question
    )
    async with db.sessions() as s:
        pool = await gather(s, request, settings)
    return letters_and_digits(fact) in letters_and_digits(
        fit(pool, cap, counter_for(settings.model), question).text
    )


async def evaluate_focus(
    db: Database, settings: Settings, caps: list[int], boosts: list[float]
) -> list[dict[str, Any]]:
    """Rows of {boost, cap, same_task, other_named, questions}: shares of questions answered."""
    world = await build(db)
    names = list(ENTITIES)
    rows = []
    for boost in boosts:
        with entity_boost(boost):
            for cap in caps:
                same = other = 0
                for i, name in enumerate(names):
                    elsewhere = names[(i + 1) % len(names)]
                    for subject, (_, question) in SUBJECTS.items():
                        fact = world.facts[(name, subject)]
                        same += await _found(db, world, settings, name, question, fact, cap)
                        named = NAMED[subject].format(name=name)
                        other += await _found(db, world, settings, elsewhere, named, fact, cap)
                n = len(names) * len(SUBJECTS)
                rows.append(
                    {
                        "boost": boost,
                        "cap": cap,
                        "same_task": same / n,
                        "other_named": other / n,
                        "questions": n,
                    }
                )
    return rows


def run_focus(settings: Settings, caps: list[int], boosts: list[float]) -> list[dict[str, Any]]:
    """`evaluate_focus` in a fresh SQLite file, deleted afterwards."""
    import asyncio
    import tempfile
    from pathlib import Path

    from orrery.db.migrations import upgrade

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'focus.db'}"
        upgrade(url)
        scoped = settings.model_copy(update={"database_url": url})

        async def run() -> list[dict[str, Any]]:
            db = Database.from_settings(scoped)
            try:
                return await evaluate_focus(db, scoped, caps, boosts)
            finally:
                await db.dispose()

        return asyncio.run(run())
