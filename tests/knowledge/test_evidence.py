"""The evidence rules behind a direct hit, as pure functions."""

from __future__ import annotations

import uuid

from orrery.knowledge.evidence import Weights, content_terms, correct_terms, is_small_talk, judge
from orrery.knowledge.search import SearchHit


def _hit(code: str, name: str, description: str = "") -> SearchHit:
    return SearchHit(uuid.uuid4(), code, name, description, {}, "rules", "Rules", 1, 1.0, 0, False)


def test_small_talk_is_words_without_content() -> None:
    for text in ("Hello! Let us get going.", "Thanks, that was really helpful!", "Good morning!", "Cheers"):
        assert is_small_talk(text), text
    for text in ("Hello, how does overage billing work?", "BR-012", "thanks; now the seat minimum"):
        assert not is_small_talk(text), text
    assert not is_small_talk("")  # nothing to read is not small talk: it is nothing
    assert content_terms("What's the team doing?") == ["team"]


def test_misspellings_are_read_as_a_candidate_word_one_edit_away() -> None:
    hits = [_hit("BR-015", "Workspace seat minimum"), _hit("FT-008", "Shared billing")]
    assert correct_terms(["workspce", "minimun", "biling", "seat", "bilingual"], hits) == [
        "workspace",
        "minimum",
        "billing",
        "seat",
        "bilingual",
    ]
    assert correct_terms(["seta"], hits) == ["seta"]  # short words are never guessed


def test_one_common_word_alone_is_never_direct_but_a_name_or_a_distinctive_word_is() -> None:
    weights = Weights.of(12, {"team": 5, "overage": 2, "minimum": 1, "seat": 4})
    team = _hit("GT-024", "Weekly active team", "A workspace with 3 or more members.")
    assert judge(team, ["team"], [], weights).reason is None  # 5 of 12 entries: common
    overage = _hit("BR-012", "Usage billing", "Overage is billed monthly.")
    assert judge(overage, ["overage"], [], weights).reason == "coverage"
    seat = _hit("BR-015", "Workspace seat minimum")
    assert judge(seat, ["seat", "minimum", "rule"], [], weights).reason == "name"  # 2 of 3 name words
    assert judge(seat, ["seat"], ["BR-015"], weights).reason == "code"
    prefix = _hit("BR-012", "Usage overage billing")
    assert judge(prefix, ["us"], [], Weights.of(12, {"us": 0})).reason is None  # "us" is no whole word
