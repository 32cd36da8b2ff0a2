"""The latest value wins (`recall/latest.py`) and passages of long messages (`recall/passages.py`),
on pools built by hand: the newer of two changed values first and the older marked with its date,
never the older alone, two differing statements both or neither, and a long reply's relevant
paragraph as "part k of n" when the whole would not fit."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np

from orrery.memory.recall import RecallPool, fit
from orrery.memory.recall.latest import mark_latest, says_update, values_of
from orrery.memory.recall.passages import blocks, passages, relevant
from orrery.memory.recall.queries import ChatInfo
from orrery.memory.recall.ranked import Offered
from orrery.memory.scoping.base import HistoryMessage, unit_tokens
from orrery.text import analyze
from orrery.tokens import TokenCounter

DAY = datetime(2025, 3, 2, 18, tzinfo=UTC)
COUNTER = TokenCounter("gpt-4o", "o200k_base", True)


def _chat(day: int, title: str) -> ChatInfo:
    return ChatInfo(uuid.uuid4(), title, DAY + timedelta(days=day), 10, None, None)


def _unit(chat: ChatInfo, seq: int, text: str, score: float, role: str = "user") -> Offered:
    at = chat.created_at + timedelta(minutes=seq)
    message = HistoryMessage(seq, role, text, None, at)
    return Offered(chat, [message], score, score, terms=(" ".join(analyze(text)),))


def _vector(*weights: float) -> np.ndarray:
    v = np.asarray([*weights, 0.0, 0.0, 0.0][:4], dtype=np.float32)
    return v / np.linalg.norm(v)


QUOTA = _vector(1.0, 0.1)  # the two statements about the quota are close in meaning
OTHER = _vector(0.0, 0.0, 1.0)


def test_values_and_update_phrasing() -> None:
    assert values_of("The daily quota is 1,000 requests.") == {"1000"}
    assert values_of("moved the deadline to April 5") == {"april5"}
    assert values_of("coverage is now 78%") == {"78%"}
    assert says_update("coverage is now 78%") and says_update("We moved the deadline to April 5")
    assert not says_update("The daily quota is 1,000 requests.")


def test_the_newer_value_comes_first_and_the_older_is_marked_with_its_date() -> None:
    first, later = _chat(0, "planning"), _chat(6, "vendor call")
    old = _unit(first, 3, "The daily API quota is 1,000 requests.", 2.5)
    new = _unit(later, 5, "Good news: the new daily API quota is 1,200 requests.", 1.2)
    noise = _unit(first, 7, "Lunch was soup and bread.", 1.8)
    offered = mark_latest([old, noise, new], [QUOTA, OTHER, _vector(1.0, 0.15)])
    assert [u.messages[0].seq for u in offered] == [5, 3, 7]  # the newer lifted before the older
    assert offered[0].score >= offered[1].score
    assert offered[1].mark is not None and offered[1].mark.kind == "superseded"
    assert offered[1].mark.date == "2025-03-08"

    fitted = fit(RecallPool(offered, 3, 3), 2000, COUNTER, "What is our daily API quota?")
    assert (
        '- [2025-03-02] user (superseded by the message of 2025-03-08): "The daily API quota is 1,000'
        in fitted.text
    )
    assert "user (updates the message of 2025-03-02)" in fitted.text
    reasons = {i.key.rsplit(" ", 1)[-1]: i.reason for i in fitted.included}
    assert "superseded by the message of 2025-03-08" in reasons["3"]
    assert "supersedes the message of 2025-03-02" in reasons["5"]


def test_never_the_older_alone_when_the_newer_does_not_fit() -> None:
    first, later = _chat(0, "planning"), _chat(6, "vendor call")
    old = _unit(first, 3, "The daily API quota is 1,000 requests.", 2.5)
    wordy = "Good news from the vendor after a long call about our plan and usage: " * 6
    new = _unit(later, 5, f"{wordy}the new daily API quota is 1,200 requests.", 1.0)
    offered = mark_latest([old, new], [QUOTA, _vector(1.0, 0.2)])
    assert offered[0] is not old and offered[1].mark is not None
    room = fit(RecallPool(offered, 2, 2), 2000, COUNTER, "quota")
    assert len(room.included) == 2
    for budget in range(60, room.tokens, 10):  # every budget too small for the newer: neither
        fitted = fit(RecallPool(offered, 2, 2), budget, COUNTER, "quota")
        texts = fitted.text
        assert ("1,000" in texts) <= ("1,200" in texts), budget
        assert fitted.tokens <= budget
    tight = fit(RecallPool(offered, 2, 2), 90, COUNTER, "quota")
    assert "1,000" not in tight.text
    assert any("left out with the newer message of 2025-03-08" in i.reason for i in tight.excluded)


def test_a_contradiction_without_update_phrasing_shows_both_dated_or_neither() -> None:
    first, later = _chat(0, "kickoff"), _chat(9, "retro")
    a = _unit(first, 2, "The team has 4 developers including me.", 2.0)
    b = _unit(later, 4, "We are 6 developers on the team.", 0.5)
    filler = _unit(first, 8, "The retro board lives in the wiki.", 1.0)
    offered = mark_latest([a, filler, b], [_vector(1.0, 0.3), OTHER, _vector(1.0, 0.2)])
    assert [u.mark.kind if u.mark else None for u in offered] == ["differs", "differs", None]
    fitted = fit(RecallPool(offered, 3, 3), 2000, COUNTER, "How many developers are on the team?")
    assert (
        '- [2025-03-02] user (differs from the message of 2025-03-11; which holds is unclear): "The team'
        in (fitted.text)
    )
    assert (
        '- [2025-03-11] user (differs from the message of 2025-03-02; which holds is unclear): "We are'
        in (fitted.text)
    )
    for budget in range(40, fitted.tokens, 5):
        text = fit(RecallPool(offered, 3, 3), budget, COUNTER, "developers").text
        assert ("4 developers" in text) == ("6 developers" in text), budget


def test_statements_on_other_subjects_or_with_the_same_value_are_not_paired() -> None:
    chat, later = _chat(0, "a"), _chat(3, "b")
    quota = _unit(chat, 1, "The daily API quota is 1,000 requests.", 2.0)
    rent = _unit(later, 2, "The rent is now 1,200 a month.", 1.0)
    echo = _unit(later, 4, "Now the quota is still 1,000 requests a day.", 0.8)
    offered = mark_latest([quota, rent, echo], [QUOTA, OTHER, _vector(1.0, 0.1)])
    assert all(u.mark is None for u in offered)
    assert offered == [quota, rent, echo]


FACT = (
    "Rate limit the public endpoints with a token bucket of 60 requests per minute per API key, "
    "returning status 429 with a Retry-After header."
)


def _long_reply() -> str:
    filler = (
        "There are a few things to weigh before we commit to an approach: the simplest option keeps "
        "the moving parts few and the data flow obvious, so a later change does not ripple through "
        "every screen, and accessibility is cheap to get right early."
    )
    paragraphs = [f"{n}. {filler}" if n % 3 == 0 else f"On point {n}, {filler}" for n in range(1, 11)]
    paragraphs.insert(6, FACT)
    paragraphs.insert(3, "```python\ndef handler(request):\n\n    return {'ok': True}\n```")
    return "\n\n".join(paragraphs)


def test_blocks_keep_code_and_list_items_whole() -> None:
    intro = "Intro line that is long enough to stand alone as a paragraph of its own."
    text = f"{intro}\n- one\n- two\n\n```\na\n\nb\n```"
    assert blocks(text) == [
        intro,
        "- one",
        "- two",
        "```\na\n\nb\n```",
    ]
    assert len(passages(_long_reply())) == 12


def test_a_long_replys_relevant_paragraph_is_recalled_as_part_k_of_n() -> None:
    chat = _chat(4, "API hardening")
    reply = _unit(chat, 6, _long_reply(), 2.0, role="assistant")
    query = "What rate limit did you suggest for the public endpoints?"
    found = relevant(reply.messages[0].content, set(analyze(query)))
    assert found is not None and found[:2] == (8, 12)
    assert unit_tokens(reply.messages, COUNTER) > 500  # the whole would not fit 300 tokens
    fitted = fit(RecallPool([reply], 1, 1), 300, COUNTER, query)
    assert f'- [2025-03-06] assistant (part 8 of 12): "{FACT}"' in fitted.text
    item = fitted.included[0]
    assert item.key.endswith("seq 6 part 8/12") and item.tokens < 100
    assert "part 8 of 12 of its message (the relevant passage)" in item.reason
    assert fitted.tokens <= 300
    # with room for the whole: the passage still, as it holds every word the message shares with
    # the question at a third of the cost; the whole when the question's words are spread over it
    assert fit(RecallPool([reply], 1, 1), 4000, COUNTER, query).included[0].key.endswith("part 8/12")
    spread = "Which rate limit and which code handler did you suggest?"
    assert fit(RecallPool([reply], 1, 1), 4000, COUNTER, spread).included[0].key.endswith("seq 6")


def test_long_replies_are_never_paired_and_stay_recallable_by_passage() -> None:
    chat, later = _chat(1, "a"), _chat(5, "b")
    one = _unit(chat, 2, _long_reply(), 2.0, role="assistant")
    two = _unit(later, 2, _long_reply().replace("60 requests", "90 requests"), 1.5, role="assistant")
    offered = mark_latest([one, two], [QUOTA, QUOTA])
    assert all(u.mark is None for u in offered)
    fitted = fit(RecallPool(offered, 2, 2), 300, COUNTER, "What rate limit did you suggest?")
    assert "(part 8 of 12)" in fitted.text
