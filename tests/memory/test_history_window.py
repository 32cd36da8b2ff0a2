"""`HistoryWindow`: a window that slides (appends, forgets the oldest) answers exactly as one built
from scratch over the same messages: search, costs, embeddings, positions."""

from __future__ import annotations

import numpy as np

from orrery.memory.embeddings import DIMENSIONS
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.window import ARRAYS_FROM, HistoryWindow, window_of
from orrery.text import analyze
from orrery.tokens import counter_for

COUNTER = counter_for("offline")
WORDS = ["budget", "launch", "greyhound", "lisbon", "invoice", "friday", "review", "pricing"]


def _message(seq: int) -> HistoryMessage:
    words = " ".join(WORDS[(seq * k) % len(WORDS)] for k in (1, 3, 5))
    return HistoryMessage(seq, "tool" if seq % 7 == 0 else "user", f"message {seq}: {words}")


def _vectors(messages: list[HistoryMessage]) -> np.ndarray:
    rows = np.zeros((len(messages), DIMENSIONS), dtype=np.float32)
    for i, m in enumerate(messages):
        rows[i, m.seq % DIMENSIONS] = 1.0
    return rows


def _add(window: HistoryWindow, messages: list[HistoryMessage]) -> None:
    window.extend(
        messages, [" ".join(analyze(m.content)) for m in messages], _vectors(messages), [True] * len(messages)
    )


def test_a_sliding_window_equals_a_fresh_one() -> None:
    sliding = HistoryWindow(DIMENSIONS)
    sliding.costs(COUNTER)  # costs already asked for are kept up to date as messages arrive
    for start in range(1, 400, 9):
        _add(sliding, [_message(seq) for seq in range(start, start + 9)])
        sliding.search(analyze("greyhound in lisbon"), 10)  # counts remembered until the next change
        sliding.drop_before(max(1, start + 9 - 50))  # keep the newest 50
    held = [_message(seq) for seq in range(sliding.first_seq, sliding.last_seq + 1)]
    fresh = window_of(held, [" ".join(analyze(m.content)) for m in held], _vectors(held))
    assert len(sliding) == 50 and [m.seq for m in sliding.messages] == [m.seq for m in held]
    assert sliding.is_tool == fresh.is_tool
    assert sliding.costs(COUNTER) == fresh.costs(COUNTER)
    assert np.array_equal(sliding.vectors(), fresh.vectors())
    for query in ("greyhound in lisbon", "friday invoice review", "pricing", "nothing"):
        terms = analyze(query)
        assert sliding.search(terms, 10) == fresh.search(terms, 10)
        assert sliding.search(terms, 10, before=20) == fresh.search(terms, 10, before=20)
    assert sliding.index_of(held[3].seq) == 3 and sliding.index_of(1) == -1


def test_positions_still_work_when_seqs_skip() -> None:
    messages = [_message(seq) for seq in (1, 2, 5, 6)]
    window = window_of(messages, [""] * 4, None)
    assert [window.index_of(s) for s in (1, 2, 5, 6, 3)] == [0, 1, 2, 3, -1]
    window.drop_before(5)
    assert [window.index_of(s) for s in (5, 6, 2)] == [0, 1, -1] and window.vectors() is None


def test_a_copy_grows_apart_and_answers_as_the_window_it_copied() -> None:
    """A copy (of a window that slid) answers as the window; each then grows without the other."""
    window = HistoryWindow(DIMENSIONS)
    window.costs(COUNTER)
    _add(window, [_message(seq) for seq in range(1, 40)])
    window.drop_before(10)
    twin = window.copy()
    _add(twin, [_message(seq) for seq in range(40, 49)])
    held = [_message(seq) for seq in range(10, 49)]
    fresh = window_of(held, [" ".join(analyze(m.content)) for m in held], _vectors(held))
    assert len(window) == 30 and window.last_seq == 39 and len(twin) == len(fresh) == 39
    assert twin.is_tool == fresh.is_tool and twin.costs(COUNTER) == fresh.costs(COUNTER)
    assert np.array_equal(twin.vectors(), fresh.vectors())
    assert np.array_equal(window.vectors(), fresh.vectors()[:30])
    for query in ("greyhound in lisbon", "friday invoice review", "pricing"):
        terms = analyze(query)
        assert twin.search(terms, 10) == fresh.search(terms, 10)
        assert window.search(terms, 50) == [i for i in fresh.search(terms, 50, before=30)]
    assert twin.index_of(45) == 35 and window.index_of(45) == -1


def test_the_score_array_holds_exactly_the_scores() -> None:
    """Recall's array of BM25 scores equals `scores` bit for bit (so ranking ties fall alike),
    with pooled statistics, after the window slid and grew, and when asked again."""
    window = HistoryWindow(DIMENSIONS)
    others = [_message(seq) for seq in range(300, 330)]
    other = window_of(others, [" ".join(analyze(m.content)) for m in others], None)
    _add(window, [_message(seq) for seq in range(1, 180)])
    for _ in range(6):  # on arrays, then (below `ARRAYS_FROM` messages) through `scores`
        for query in ("greyhound in lisbon", "friday invoice review budget", "pricing", "nothing"):
            terms = analyze(query)
            corpus = window.corpus(terms)
            pooled = type(corpus).pooled([corpus, other.corpus(terms)])
            array = window.score_array(terms, pooled)
            expected = np.zeros(len(window))
            for row, score in window.scores(terms, corpus=pooled).items():
                expected[row] = score
            assert array.tolist() == expected.tolist()
            assert window.score_array(terms, pooled).tolist() == expected.tolist()
        window.drop_before(window.first_seq + 40)
        _add(window, [_message(seq) for seq in range(window.last_seq + 1, window.last_seq + 12)])
    assert len(window) < ARRAYS_FROM
