"""`orrery eval make-dataset --kind project`: one person working on one project with an assistant.

Each conversation is one kind of project (`project_kinds`) over 5-10 dated sessions a few days
apart, 15-40 messages each: short user messages, many long assistant replies (paragraphs, lists,
code). Planted into it, with questions asked after the last session and their evidence turn ids:
facts stated once (`single_hop`), standing instructions (`instruction`) and preferences
(`preference`) asked about by requests that share few words with them, values changed in a later
session (`knowledge_update`; evidence the newer, `superseded` the older), statements that contradict
without update phrasing (`contradiction`; evidence both), milestones across sessions (`event_order`),
the project's arc (`summary`; evidence each session's opening request) and things asked for one at a
time across sessions (`multi_session`). A planted statement is sometimes said alone, sometimes inside
a longer message. Same seed, same file.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, time, timedelta

from orrery.evaluation import project_pools as P
from orrery.evaluation.dataset import Conversation, Dataset, Question, Session, Turn
from orrery.evaluation.project_kinds import DOMAINS

_SLOT = re.compile(r"\{(\w+)\}")


def fill(template: str, values: dict[str, str]) -> str:
    """`template` with its known `{slot}`s filled; other braces (code) stay as they are."""
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@dataclass
class Story:
    """One conversation in the making: planted user messages per session, and the questions."""

    rng: random.Random
    domain: P.Domain
    values: dict[str, str]
    sessions: int
    planted: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    questions: list[tuple[str, str, list[str], str, list[str]]] = field(default_factory=list)

    def say(self, key: str, session: int, text: str) -> None:
        self.planted.setdefault(session, []).append((key, fill(text, self.values)))

    def ask(
        self, category: str, question: str, keys: list[str], answer: str, older: list[str] | None = None
    ) -> None:
        self.questions.append(
            (category, fill(question, self.values), keys, fill(answer, self.values), older or [])
        )

    def thing(self) -> str:
        return self.rng.choice(self.domain.things)

    def later_pair(self) -> tuple[int, int]:
        """Two sessions, the second strictly later."""
        first = self.rng.randrange(self.sessions - 1)
        return first, self.rng.randint(first + 1, self.sessions - 1)


def _plant_statements(story: Story) -> None:
    """Facts, standing instructions and preferences: said once, asked about at the end."""
    rng, d = story.rng, story.domain
    for n, fact in enumerate(rng.sample(d.facts, 3)):
        story.say(f"fact{n}", rng.randrange(story.sessions), rng.choice(fact.said))
        story.ask("single_hop", fact.asked, [f"fact{n}"], fact.answer)
    kinds = (("instruction", d.rules, P.GENERIC_RULES, 2), ("preference", d.prefs, P.GENERIC_PREFS, 1))
    for category, own, generic, count in kinds:
        rules = [*rng.sample(own, count), rng.choice(generic)]
        for n, rule in enumerate(rules):
            key = f"{category}{n}"
            story.say(key, rng.randrange(story.sessions), rng.choice(rule.said))
            question = fill(rng.choice(rule.asked), {"thing": story.thing()})
            story.ask(category, question, [key], rule.answer)


def _plant_changes(story: Story) -> None:
    """Values that change in a later session, and statements that contradict each other."""
    rng, d = story.rng, story.domain
    for n, change in enumerate(rng.sample(d.changes, 2 if story.sessions >= 6 else 1)):
        old, new = rng.choice(change.values)
        first, second = story.later_pair()
        story.say(f"old{n}", first, fill(rng.choice(change.first), {"old": old}))
        story.say(f"new{n}", second, fill(rng.choice(change.second), {"new": new}))
        story.ask("knowledge_update", change.asked, [f"new{n}"], new, [f"old{n}"])
    clash = rng.choice(d.clashes)
    first, second = story.later_pair()
    story.say("clash0", first, rng.choice(clash.first))
    story.say("clash1", second, rng.choice(clash.second))
    story.ask("contradiction", clash.asked, ["clash0", "clash1"], "both were said; ask which holds")


def _plant_arc(story: Story) -> None:
    """Milestones in order across sessions, and things asked for one session at a time."""
    rng, d = story.rng, story.domain
    count = min(rng.randint(3, 4), story.sessions)
    events = [d.events[i] for i in sorted(rng.sample(range(len(d.events)), count))]
    sessions = sorted(rng.sample(range(story.sessions), count))
    for n, ((said, _), session) in enumerate(zip(events, sessions, strict=True)):
        story.say(f"event{n}", session, said)
    names = [name for _, name in events]
    asked = rng.sample(names, len(names))
    question = fill(rng.choice(P.ORDER_QUESTIONS), {"events": ", ".join(asked[:-1]) + " and " + asked[-1]})
    story.ask("event_order", question, [f"event{n}" for n in range(count)], " -> ".join(names))
    count = min(rng.randint(3, 4), story.sessions)
    items = rng.sample(d.items.items, count)
    for n, (item, session) in enumerate(zip(items, rng.sample(range(story.sessions), count), strict=True)):
        story.say(f"item{n}", session, fill(rng.choice(d.items.said), {"item": item}))
    story.ask(
        "multi_session", d.items.asked, [f"item{n}" for n in range(count)], f"{count}: {', '.join(items)}"
    )


def _sentences(domain: P.Domain) -> list[str]:
    text = " ".join([*domain.paragraphs, *P.GENERIC_PARAGRAPHS])
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


def reply(rng: random.Random, domain: P.Domain, thing: str, long: bool) -> str:
    """An assistant answer: a lead, paragraphs of the domain's sentences, often a list and code;
    long ones run to 300-1,000 tokens."""
    pool = _sentences(domain)
    parts = [fill(rng.choice(P.LEADS), {"thing": thing})]
    for _ in range(rng.randint(3, 7) if long else rng.randint(1, 2)):
        parts.append(" ".join(rng.sample(pool, rng.randint(3, 5))))
    if long and rng.random() < 0.8:
        bullets = rng.sample(domain.bullets, rng.randint(4, 7))
        parts.append(
            "\n".join(f"{n + 1}. {b}." if rng.random() < 0.5 else f"- {b}." for n, b in enumerate(bullets))
        )
    if long and rng.random() < 0.45:
        parts.append(rng.choice(domain.code))
    if long or rng.random() < 0.5:
        parts.append(rng.choice(P.WRAPS))
    return "\n\n".join(parts)


def _exchange(story: Story) -> list[tuple[str, str, str | None]]:
    """A filler question and its answer (long more often than not)."""
    rng, thing = story.rng, story.thing()
    ask = fill(
        rng.choice(story.domain.asks) if rng.random() < 0.75 else rng.choice(P.FOLLOW_UPS), {"thing": thing}
    )
    if rng.random() < 0.15:  # a pasted draft, code or query
        ask = fill(rng.choice(P.PASTES), {"ask": ask, "code": rng.choice(story.domain.code)})
    return [
        ("user", ask, None),
        ("assistant", reply(rng, story.domain, thing, rng.random() < 0.6), None),
    ]


def _planted_exchange(story: Story, key: str, text: str) -> list[tuple[str, str, str | None]]:
    """A planted statement said alone (a short acknowledgement), or inside a longer message (half
    the time; a milestone always, as news in passing)."""
    rng = story.rng
    if key.startswith("event") or rng.random() < 0.5:
        thing = story.thing()
        ask = fill(rng.choice(story.domain.asks), {"thing": thing})
        values = {"said": text, "ask": ask[0].lower() + ask[1:], "code": rng.choice(story.domain.code)}
        carried = fill(rng.choice(P.CARRIERS), values)
        return [("user", carried, key), ("assistant", reply(rng, story.domain, thing, True), None)]
    return [("user", text, key), ("assistant", rng.choice(P.ACKS), None)]


def _session(story: Story, number: int, topic: str) -> list[tuple[str, str, str | None]]:
    """One session: the opening request, filler exchanges with the planted ones among them, a close."""
    rng = story.rng
    opener = fill(rng.choice(P.OPENERS), {"topic": topic})
    if rng.random() < 0.85:  # the specifics a person gives when starting on something
        for template in rng.sample(P.DETAILS, rng.randint(1, 2)):
            detail = {
                "colleague": rng.choice(P.COLLEAGUES),
                "tag": rng.choice(P.TAGS),
                "n": str(rng.randint(2, 28)),
            }
            opener += " " + fill(template, detail)
    turns: list[tuple[str, str, str | None]] = [
        ("user", opener, f"open{number}"),
        ("assistant", reply(rng, story.domain, topic, True), None),
    ]
    body: list[tuple[str, str, str | None]] = []
    for _ in range(max(3, rng.randint(6, 17) - len(story.planted.get(number, [])))):
        body += _exchange(story)
    for key, text in story.planted.get(number, []):
        at = 2 * rng.randint(0, len(body) // 2)
        body[at:at] = _planted_exchange(story, key, text)
    turns += body
    if rng.random() < 0.7:
        turns += [("user", rng.choice(P.CLOSINGS), None), ("assistant", rng.choice(P.CLOSING_REPLIES), None)]
    return turns


def make_project_conversation(rng: random.Random, domain: P.Domain, index: int) -> Conversation:
    """One person, one project of `domain`, 5-10 dated sessions, planted statements and questions."""
    name, nick = rng.choice(P.NAMES)
    values = {slot: rng.choice(choices) for slot, choices in sorted(domain.values.items())}
    values |= {"name": name, "nick": nick}
    story = Story(rng, domain, values, rng.randint(5, 10))
    _plant_statements(story)
    _plant_changes(story)
    _plant_arc(story)
    topics = rng.sample(domain.topics, story.sessions)
    story.ask(
        "summary",
        rng.choice(P.SUMMARY_QUESTIONS),
        [f"open{n}" for n in range(story.sessions)],
        "; ".join(topics),
    )
    day = date(2025, 1, 6) + timedelta(days=rng.randint(0, 200))
    sessions: list[Session] = []
    ids: dict[str, str] = {}
    for number, topic in enumerate(topics):
        raw = _session(story, number, topic)
        turns = [Turn(id=f"D{number + 1}:{i + 1}", role=r, text=t) for i, (r, t, _) in enumerate(raw)]
        ids |= {key: turn.id for (_, _, key), turn in zip(raw, turns, strict=True) if key}
        sessions.append(
            Session(
                id=number + 1,
                date=day,
                time=time(rng.randint(8, 21), rng.choice((0, 15, 30, 45))),
                turns=turns,
            )
        )
        day += timedelta(days=rng.randint(2, 6))
    cid = f"p{index + 1}"
    qa = [
        Question(
            id=f"{cid}-q{n + 1}",
            question=question,
            category=category,
            evidence=[ids[k] for k in keys],
            answer=answer,
            superseded=[ids[k] for k in older],
        )
        for n, (category, question, keys, answer, older) in enumerate(story.questions)
    ]
    return Conversation(id=cid, speakers={"user": name, "assistant": "Assistant"}, sessions=sessions, qa=qa)


def make_project_dataset(seed: int = 7, conversations: int = 6) -> Dataset:
    """The whole dataset for a seed (deterministic); the domains take turns in a seeded order."""
    rng = random.Random(seed)
    order = rng.sample(DOMAINS, len(DOMAINS))
    return Dataset(
        name=f"orrery-project-s{seed}",
        seed=seed,
        conversations=[
            make_project_conversation(rng, order[i % len(order)], i) for i in range(conversations)
        ],
    )
