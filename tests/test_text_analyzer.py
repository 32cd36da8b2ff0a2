"""The one text analyzer: Snowball stems shared by BM25, stored message terms and keyword matching."""

from __future__ import annotations

from orrery.text import analyze, search_terms, stem, stems_of


def test_stems_agree_on_word_families() -> None:
    assert stem("process") == stem("processes") == "process"
    assert stem("news") == "news"
    assert stem("pricing") == stem("priced") == stem("prices") == "price"
    assert stem("running") == stem("runs") == "run"


def test_analyze_drops_stop_words_and_splits_hyphenated_words() -> None:
    assert analyze("The follow-up on the processes & news: pricing CHANGED!") == [
        "follow",
        "up",
        "process",
        "news",
        "price",
        "chang",
    ]
    assert analyze("") == [] and analyze("the and of") == []


def test_search_terms_stay_unstemmed_for_the_database_engines() -> None:
    assert search_terms("Processes, news; don't panic") == ["processes", "news", "don", "panic"]


def test_stems_of_a_text_are_its_search_terms_stemmed() -> None:
    text = "Pricing: the processes price news"
    assert stems_of(text) == {"price", "process", "news"} == {stem(t) for t in search_terms(text)}
    assert stems_of(text) is stems_of(text) and stems_of("") == frozenset()
