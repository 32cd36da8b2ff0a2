"""How `orrery eval memory` scores what the model sees, and the plain BM25 control it is compared to.

Two measures. Most questions: an evidence message counts when its whole text is in what the model
sees, compared on letters and digits only (quoting costs nothing). Questions about the arc of the
work (`event_order`, `summary`) are answered from what each message said, not from its exact text,
so there an evidence message counts by the share of its five rarest words (`orrery.text.analyze`
words, ranked by how many of the conversation's messages hold them, ties by first appearance in the
message) found among the words of what the model sees: a digest that keeps what each message said
earns the credit, a paraphrase that drops its specifics does not.

The control is plain Okapi BM25 (`PlainBM25`: k1 1.2, b 0.75, `orrery.text.tokenize` words) over every
earlier message of the person, all their chats, packed best first into the same budget recall had,
each message costing its tokens plus the per-line overhead recall pays (`LINE_EXTRA`). A unit is a
message (the datasets hold no tool calls; a call would travel with its results).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from orrery.evaluation.baseline import PlainBM25
from orrery.evaluation.dataset import Conversation, Question
from orrery.memory.recall.fit import LINE_EXTRA
from orrery.text import analyze, tokenize
from orrery.tokens import TokenCounter

RAREST = 5
"""Words of an evidence message that the rarest-words measure looks for."""
ARC_KINDS = frozenset({"event_order", "summary"})
"""Categories scored by the rarest-words measure."""
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def letters_and_digits(text: str) -> str:
    """Text as the full-text measure compares it: lowercase letters and digits only."""
    return _NOT_ALNUM.sub("", text.lower())


def rarest_words(texts: dict[str, str], count: int = RAREST) -> dict[str, list[str]]:
    """Each message's `count` rarest words: analysed words ranked by the number of messages (of
    `texts`, by id) holding them, ties by first appearance in the message."""
    words = {key: list(dict.fromkeys(analyze(text))) for key, text in texts.items()}
    frequency = Counter(w for ws in words.values() for w in ws)
    return {
        key: [w for _, _, w in sorted((frequency[w], n, w) for n, w in enumerate(ws))[:count]]
        for key, ws in words.items()
    }


@dataclass(frozen=True)
class Scorer:
    """One conversation's evidence as the measures compare it."""

    texts: dict[str, str]
    """Each message's letters and digits, by turn id."""
    rare: dict[str, list[str]]
    """Each message's rarest words, by turn id."""

    @classmethod
    def of(cls, conversation: Conversation) -> Scorer:
        raw = {t.id: t.text for _, t in conversation.turns()}
        return cls({k: letters_and_digits(v) for k, v in raw.items()}, rarest_words(raw))

    def score(self, question: Question, seen: str) -> tuple[float, bool]:
        """The share of the question's evidence in `seen`, and whether an older (superseded) message
        is there while the evidence is not ("older alone")."""
        text = letters_and_digits(seen)
        whole = [self.texts[e] in text for e in question.evidence]
        older_alone = not all(whole) and any(self.texts[o] in text for o in question.superseded)
        if question.category not in ARC_KINDS:
            return sum(whole) / len(whole), older_alone
        words = set(analyze(seen))
        shares = [self._share(e, words, text) for e in question.evidence]
        return sum(shares) / len(shares), older_alone

    def _share(self, turn: str, words: set[str], text: str) -> float:
        rare = self.rare[turn]
        if not rare:  # nothing but stop words: the whole text, as the other measure
            return float(self.texts[turn] in text)
        return sum(w in words for w in rare) / len(rare)


@dataclass(frozen=True)
class Control:
    """The plain BM25 control over one person's messages: each message's words, cost and text."""

    words: list[list[str]]
    costs: list[int]
    texts: list[str]

    @classmethod
    def of(cls, conversation: Conversation, counter: TokenCounter) -> Control:
        turns = [t for _, t in conversation.turns()]
        return cls(
            [tokenize(t.text) for t in turns],
            [counter.count_message(t.role, t.text) + LINE_EXTRA for t in turns],
            [t.text for t in turns],
        )

    def context(self, query: str, budget: int) -> tuple[str, int]:
        """What the model would see with the control's picks in place of recall (the question and
        the picked messages in order), and the tokens they cost."""
        chosen = PlainBM25.choose(tokenize(query), self.words, self.costs.__getitem__, budget)
        return "\n".join([query, *(self.texts[i] for i in chosen)]), sum(self.costs[i] for i in chosen)
