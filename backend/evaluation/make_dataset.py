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

from backend.evaluation import chat_lines as L
from backend.evaluation.dataset import Conversation, Dataset, Question, Session, Turn


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


def _persona_plan(rng: random.Random, who: dict[str, str]) -> Plan:  # noqa: PLR0915 - one story
    p = Plan()
    kind, breed, pet, breed_word = rng.choice(L.PETS)
    who["pet"] = pet
    p.plant(
        "pet",
        "early",
        f"Big news at home: we brought {pet} back from the rescue centre on Saturday. {breed.capitalize()}, "
        "about two years old, and very shy so far.",
        "Congratulations! The first weeks are a big adjustment. How are the kids taking it?",
        [pet, breed_word],
    )
    p.ask("single_hop", f"What kind of animal is {pet}?", ["pet"], breed)
    p.ask("temporal", f"When did {pet} join the family?", ["pet"], "the session date of the adoption")
    p.ask(
        "adversarial",
        f"What is the name of the user's {L.OTHER_PET[kind]}?",
        ["pet"],
        f"never said; {pet} is a {kind}",
    )

    race, (t1, t2) = rng.choice(L.RACES), rng.choice(L.TIMES)
    p.plant(
        "race1",
        "early",
        f"I did it, I entered the {race} in October. I'm aiming for {t1}, which feels ambitious for me.",
        "That's a great goal. Shall we sketch a training block that builds up gradually?",
        [t1],
    )
    p.plant(
        "race2",
        "late",
        f"Change of plan: after the last few long runs I honestly think {t2} is realistic, so that's the new "
        "target. Scary to say it out loud.",
        "Saying it out loud is half the commitment. Your long runs back it up.",
        [t2],
    )
    p.ask("knowledge_update", f"What finish time is the user going for in the {race}?", ["race2"], t2)

    job1, co1, job2, co2 = rng.choice(L.JOBS)
    p.plant(
        "job1",
        "early",
        f"For context, I'm a {job1} at {co1}. Mostly fine, but the pace has picked up since the reorg.",
        "Thanks, that helps. What part of the role gives you energy, and what drains it?",
        [co1],
    )
    p.plant(
        "job2",
        "late",
        f"I signed the contract! I'm leaving {co1} and starting at {co2} as {job2} next month.",
        "Huge congratulations. How do you want to use the notice period?",
        [co2, job2],
    )
    p.ask("knowledge_update", "Which company will the user be working for?", ["job2"], co2)
    p.ask("temporal", f"When did the user accept the offer from {co2}?", ["job2"], "the session date")

    friend, city = who["friend"], rng.choice(L.MOVE_CITIES)
    p.plant(
        "friend1",
        "early",
        f"I've started doing Saturday long runs with {friend}, who lives two streets over. Much easier "
        "to get up at seven when someone is waiting on the corner.",
        "A running buddy is the best accountability there is. Do you two keep a similar pace?",
        [friend, "long runs"],
    )
    p.plant(
        "friend2",
        "late",
        f"{friend} told me over coffee that they're relocating to {city} in the spring for their partner's "
        "job. Happy for them, gutted for me.",
        "That's bittersweet. Would it help to find a club before they go?",
        [city],
    )
    p.ask(
        "multi_hop",
        "Which city is the person the user does Saturday long runs with moving to?",
        ["friend1", "friend2"],
        city,
    )

    manager, team, book = who["manager"], rng.choice(L.TEAMS), rng.choice(L.BOOKS)
    p.plant(
        "mgr1",
        "early",
        f"My new boss started this week: {manager}, she came over from the {team} team and seems sharp.",
        "New managers change a lot. What do you want her to know about how you work best?",
        [manager, f"{team} team"],
    )
    p.plant(
        "mgr2",
        "late",
        f"{manager} lent me her copy of {book} and said chapter four changed how she runs meetings.",
        "Nice gesture. Will you read it on the commute?",
        [book],
    )
    p.ask("multi_hop", "What did the user's boss give them to read?", ["mgr1", "mgr2"], book)
    p.ask(
        "adversarial",
        f"Which city is {manager} relocating to?",
        ["friend2"],
        f"never said; {friend} is moving",
    )

    sibling, rel = who["sibling"], rng.choice(L.SIBLING_RELATIONS)
    job, scity = rng.choice(L.SIBLING_JOBS), who["sibling_city"]
    wedding = f"{rng.randint(2, 27)} {rng.choice(['June', 'July', 'August'])}"
    p.plant(
        "sib1",
        "early",
        f"My {rel} {sibling} works nights as a {job} in {scity}, so we mostly trade voice notes.",
        "Night shifts are brutal. It's lovely that you stay in touch anyway.",
        [job],
    )
    p.plant(
        "sib2",
        "late",
        f"{sibling} just rang, she's getting married on {wedding}! I need to book trains before prices jump.",
        "What wonderful news! Want to put the booking on tomorrow's list?",
        [wedding],
    )
    p.ask("multi_hop", f"On what day does the {job} in the family get married?", ["sib1", "sib2"], wedding)

    allergen, food = rng.choice(L.ALLERGIES)
    p.plant(
        "allergy",
        "early",
        f"Mystery solved: the rash was {allergen}. The clinic confirmed it, so no more {food} for me.",
        "Good to know for sure. Do you want to plan some easy swaps for your usual meals?",
        [allergen],
    )
    p.ask("single_hop", "Which ingredient makes the user break out in a rash?", ["allergy"], allergen)

    trip, (a1, a2) = rng.choice(L.TRIPS), rng.choice(L.SAVINGS)
    p.plant(
        "save1",
        "early",
        f"We've set up a standing order: {a1} a month towards {trip} next year.",
        "Automating it is smart. How does that sit with the rest of the budget?",
        [a1],
    )
    p.plant(
        "save2",
        "late",
        f"Since the raise we bumped the {trip} pot to {a2} every month. Feels good to watch it grow.",
        "Lovely. Keep an eye on the buffer too after the boiler surprise.",
        [a2],
    )
    p.ask("knowledge_update", "How much goes into the holiday fund each month these days?", ["save2"], a2)

    procedure, drink = rng.choice(L.PROCEDURES), rng.choice(L.DRINKS)
    p.plant(
        "proc",
        "late",
        f"Had the {procedure} this morning. All fine, just sore and a bit woozy.",
        "Glad it went smoothly. Rest up and keep today light.",
        [procedure],
    )
    p.ask("temporal", f"When did the user have the {procedure}?", ["proc"], "the session date")
    p.plant(
        "drink",
        "early",
        f"I've swapped my afternoon coffee for {drink}. Caffeine after lunch was wrecking my sleep.",
        "That's a kind experiment to run on yourself. Let's see how your nights look in a week.",
        [drink],
    )
    p.ask("single_hop", "What does the user have after lunch instead of their old habit?", ["drink"], drink)

    bike, price = rng.choice(L.BIKES)
    area = rng.choice(L.AREAS)
    p.plant(
        "bike",
        "early",
        f"Picked up a second-hand {bike} for the commute, {price} from a guy in {area}.",
        "Nice find! Cycling in will be a great bit of movement every day.",
        [price],
    )
    p.ask("single_hop", "How much did the user pay for the bicycle?", ["bike"], price)
    p.ask("adversarial", "What car did the user buy for the commute?", ["bike"], f"never said; a {bike}")
    return p


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
