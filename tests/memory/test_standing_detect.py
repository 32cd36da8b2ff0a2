"""The capture decision alone (no database): a long message keeps only the instruction's sentence,
code is never read as an instruction, a global one says so, and both matchers (the embedder and its
lexical fallback) refuse the hard negatives."""

from __future__ import annotations

import pytest

from orrery.memory.embeddings import load_embedder
from orrery.memory.standing import WHOLE_MESSAGE_CHARS, detect

NEGATIVES = (
    "Do you always include status codes?",
    "My boss always says to ship early.",
    "Use Python for this one.",
    "I always used to write everything in Perl.",
    "If I said always use tabs, would that break the formatter?",
    "I love camping trips with my family.",
    "Don't be afraid to ask for help.",
    "Forget that I always sign my answers with a smiley.",  # a request to forget takes one back
    "Please stop remembering that I never want emojis.",
)


@pytest.mark.parametrize("lexical", [False, True])
def test_hard_negatives_are_not_captured(lexical: bool) -> None:
    embedder = None if lexical else load_embedder()
    assert [t for t in NEGATIVES if detect(t, embedder)] == []
    found = detect("Keep answers short, in all my projects.", embedder)
    assert found is not None and (found.kind, found.subject, found.everywhere) == (
        "instruction",
        "answer length",
        True,
    )
    preference = detect("I prefer lightweight, dependency-free libraries.", embedder)
    assert preference is not None and preference.kind == "preference" and not preference.everywhere


def test_a_long_message_keeps_the_sentence_and_code_is_not_an_instruction() -> None:
    said = "From now on, always include the HTTP status code when you explain an API error."
    text = "Here is the stack trace from staging after the deploy. " * 6 + said + " Thanks for that."
    assert len(text) > WHOLE_MESSAGE_CHARS
    found = detect(text, load_embedder())
    assert found is not None and found.text == said
    assert detect("Fix this:\n```python\n# never use eval, always sanitize\n```", load_embedder()) is None
    short = "Thanks! From now on, answer in Spanish."
    assert (found := detect(short, load_embedder())) is not None and found.text == short
