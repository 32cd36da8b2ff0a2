"""`orrery eval make-dataset`: long coaching conversations with planted facts, generated from a seed.

Each conversation has 22-26 dated sessions over about six months of everyday chat. Planted into it:
single facts, facts that change later (the newer statement is the evidence), facts split across two
sessions (multi-hop), events whose date is the answer, and questions about things never said (their
evidence is the turn that shows what *was* said). Same seed, same file, byte for byte.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from orrery.evaluation import chat_lines as L
from orrery.evaluation.dataset import Conversation, Dataset, Question, Session, Turn
from orrery.evaluation.persona_data import PLANTED, QUESTIONS


@dataclass
class Planted:
    """A planted exchange: turns (role, text, facts) placed early or late; index 0 is the evidence."""

    key: str
    phase: str
    turns: list[tuple[str, str, list[str]]]


@dataclass
class Plan:
    """A persona's planted exchanges and the questions about them (evidence by planted key)."""

    planted: list[Planted] = field(default_factory=list)
    questions: list[tuple[str, str, list[str], str]] = field(default_factory=list)

    def plant(self, key: str, phase: str, user: str, reply: str, facts: list[str]) -> None:
        self.planted.append(Planted(key, phase, [("user", user, facts), ("assistant", reply, [])]))

    def ask(self, category: str, question: str, keys: list[str], answer: str) -> None:
        self.questions.append((category, question, keys, answer))


def _draw_persona(rng: random.Random, who: dict[str, str]) -> dict[str, str]:
    """Draw the persona's story values; the draw order is part of the seed's contract, keep it."""
    v = dict(who)
    v["kind"], v["breed"], v["pet"], v["breed_word"] = rng.choice(L.PETS)
    v["Breed"], v["other_pet"] = v["breed"].capitalize(), L.OTHER_PET[v["kind"]]
    v["race"], (v["t1"], v["t2"]) = rng.choice(L.RACES), rng.choice(L.TIMES)
    v["job1"], v["co1"], v["job2"], v["co2"] = rng.choice(L.JOBS)
    v["city"] = rng.choice(L.MOVE_CITIES)
    v["team"], v["book"] = rng.choice(L.TEAMS), rng.choice(L.BOOKS)
    v["rel"], v["job"] = rng.choice(L.SIBLING_RELATIONS), rng.choice(L.SIBLING_JOBS)
    v["wedding"] = f"{rng.randint(2, 27)} {rng.choice(['June', 'July', 'August'])}"
    v["allergen"], v["food"] = rng.choice(L.ALLERGIES)
    v["trip"], (v["a1"], v["a2"]) = rng.choice(L.TRIPS), rng.choice(L.SAVINGS)
    v["procedure"], v["drink"] = rng.choice(L.PROCEDURES), rng.choice(L.DRINKS)
    v["bike"], v["price"] = rng.choice(L.BIKES)
    v["area"] = rng.choice(L.AREAS)
    who["pet"] = v["pet"]  # filler lines mention the pet too
    return v


def _persona_plan(rng: random.Random, who: dict[str, str]) -> Plan:
    """The story of `persona_data` told with this persona's drawn values."""
    v = _draw_persona(rng, who)
    plan = Plan()
    for key, phase, user, reply, facts in PLANTED:
        plan.plant(key, phase, user.format(**v), reply, [fact.format(**v) for fact in facts])
    for category, question, keys, answer in QUESTIONS:
        plan.ask(category, question.format(**v), keys, answer.format(**v))
    return plan


def _filler(rng: random.Random, who: dict[str, str], count: int) -> list[tuple[str, str, list[str]]]:
    turns: list[tuple[str, str, list[str]]] = []
    for line in rng.sample(L.USER_LINES, count):
        text = line if rng.random() < 0.4 else f"{line} {rng.choice(L.USER_LINES)}"
        turns.append(("user", text.format(**who), []))
        turns.append(("assistant", rng.choice(L.ASSISTANT_LINES), []))
    return turns


def make_conversation(rng: random.Random, index: int) -> Conversation:
    """One conversation: a persona, 22-26 sessions, planted facts, questions."""
    who = {
        "user": L.USER_NAMES[index % len(L.USER_NAMES)],
        "friend": rng.choice(L.FRIENDS),
        "manager": rng.choice(L.MANAGERS),
        "sibling": rng.choice(L.SIBLINGS),
        "sibling_city": rng.choice(L.SIBLING_CITIES),
        "project": rng.choice(L.PROJECTS),
    }
    plan = _persona_plan(rng, who)
    n_sessions = rng.randint(22, 26)
    half = n_sessions // 2
    slots: dict[int, list[Planted]] = {}
    for planted in plan.planted:
        where = rng.randint(1, half - 1) if planted.phase == "early" else rng.randint(half + 1, n_sessions)
        slots.setdefault(where, []).append(planted)
    day = date(2025, 1, 6) + timedelta(days=rng.randint(0, 40))
    sessions: list[Session] = []
    evidence: dict[str, str] = {}
    for number in range(1, n_sessions + 1):
        raw: list[tuple[str, str, list[str]]] = [
            ("user", rng.choice(L.USER_SMALL_TALK), []),
            ("assistant", rng.choice(L.ASSISTANT_LINES), []),
        ]
        body = _filler(rng, who, rng.randint(8, 12))
        for planted in slots.get(number, []):
            at = 2 * rng.randint(0, len(body) // 2)
            body[at:at] = planted.turns
        raw += body + [
            ("user", rng.choice(L.USER_CLOSINGS), []),
            ("assistant", rng.choice(L.ASSISTANT_CLOSINGS), []),
        ]
        turns = [Turn(id=f"D{number}:{i + 1}", role=r, text=t, facts=f) for i, (r, t, f) in enumerate(raw)]
        for planted in slots.get(number, []):
            evidence[planted.key] = next(t.id for t in turns if t.text == planted.turns[0][1])
        sessions.append(Session(id=number, date=day, turns=turns))
        day += timedelta(days=rng.randint(4, 9))
    cid = f"c{index + 1}"
    qa = [
        Question(
            id=f"{cid}-q{i + 1}", question=q, category=cat, evidence=[evidence[k] for k in keys], answer=a
        )
        for i, (cat, q, keys, a) in enumerate(plan.questions)
    ]
    return Conversation(
        id=cid, speakers={"user": who["user"], "assistant": "Coach"}, sessions=sessions, qa=qa
    )


def make_dataset(seed: int = 7, conversations: int = 5) -> Dataset:
    """The whole dataset for a seed (deterministic)."""
    rng = random.Random(seed)
    return Dataset(
        name=f"orrery-coaching-s{seed}",
        seed=seed,
        conversations=[make_conversation(rng, i) for i in range(conversations)],
    )
