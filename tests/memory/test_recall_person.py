"""A question about the person ("when does my sprint end?") is answered by what the person said, not
by the assistant's replies that repeat its words; a question about the assistant's own words ("what
did you suggest…") is not (both databases, the local embedder)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.memory.recall.ranked import about_the_person
from orrery.repo.identity import create_project, create_user
from tests.memory.test_recall_latest_chats import _ask, _chat, _section

SAID = "The first sprint wraps up on April 12."
REPLIES = [
    "For the first sprint, end it with a review: a sprint ends when its goal is met or its time runs out, "
    "and the first sprint of a team often ends early because the first sprint's estimates are rough.",
    "A sprint review at the end of the first sprint shows what the sprint delivered; a first sprint that "
    "ends without a demo teaches the team little about when sprints should end.",
]

OTHER = [
    ["Can we review the login screen?", "Sure, the login screen needs a loading state and an error line."],
    ["Which database should the reports use?", "PostgreSQL fits: the reports are joins over orders."],
    ["How do I write a good user story?", "Say who wants what and why, then the acceptance criteria."],
    ["Our designer is away next week.", "Then the mock-ups can wait; start with the API contract."],
    ["What should the README say first?", "What the project is, then how to run it in one command."],
]


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("When does my first sprint end?", True),
        ("What did we decide about the login screen?", True),
        ("Remind me what I said about the budget", True),
        ("What did you suggest for the end of the first sprint?", False),
        ("When did you say my first sprint should end?", False),
        ("What was your advice on sprints?", False),
        ("How do sprints end?", False),
    ],
)
def test_what_a_question_is_about(question: str, about: bool) -> None:
    assert about_the_person(question) is about


async def _rank(db: Database, settings: Settings, question: str) -> list[Any]:
    async with db.transaction() as s:
        ana = (await create_user(s, f"ana-{uuid.uuid4().hex[:6]}@example.org", "Ana")).id
        project = await create_project(s, ana, "Sprints")
        await _chat(s, ana, project.id, 0, ["How long should a sprint be?", REPLIES[0], SAID, "Noted."])
        await _chat(s, ana, project.id, 3, ["Should the sprint end with a demo?", REPLIES[1]])
        for day, lines in enumerate(OTHER, start=5):
            await _chat(s, ana, project.id, day, lines)
    wc = await _ask(db, settings, ana, project.id, question)
    return [(i.chat_title, i.seq) for i in _section(wc).included]


async def test_the_persons_own_statement_is_lifted_above_replies_that_repeat_its_words(
    db: Database, settings: Settings
) -> None:
    about_her = await _rank(db, settings, "When does my first sprint end?")
    neutral = await _rank(db, settings, "When does the first sprint end?")
    assert about_her.index(("day 0", 3)) < neutral.index(("day 0", 3))
    assert about_her.index(("day 0", 3)) < about_her.index(("day 3", 2))  # ahead of a reply


async def test_a_question_about_the_assistants_words_is_not_turned_to_the_persons(
    db: Database, settings: Settings
) -> None:
    about_you = await _rank(db, settings, "When did you say my first sprint should end?")
    neutral = await _rank(db, settings, "When did you say the first sprint should end?")
    assert about_you.index(("day 0", 3)) == neutral.index(("day 0", 3))
