"""The extractive digest of one chat: per message, a compressed clause of its rarest words, numbers,
dates and names, in the order they were said, within a per-chat cap.

Rarity is measured over the person's own messages (`Rarity`: document frequency across their recent
messages in every chat they keep), not over the chat alone: a word a person uses in one chat of
ten is what that chat is about, while a word repeated in every chat (their project's name, "app")
says little about any one of them: a word in more than a tenth of their messages is never kept.
Words are taken by rarity, each message's second word counting as if it were e times as common, its
third e² and so on (`RANK_COST`; replies `REPLY_LAG` ranks behind), until the cap: every message
keeps what is most its own before a message keeps more, unless what it says next is rarer still.
Numbers and capitalised names mid-sentence rank higher than their frequency alone says,
since what a person decided is so often a number or a name.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from orrery.text import STOP_WORDS

TOKEN = re.compile(r"\d[\d,.:/%-]*\d%?|\d%?|[A-Za-z][A-Za-z0-9'’-]*[A-Za-z0-9]|[A-Za-z]")
"""Words (with inner apostrophes and hyphens), numbers (1,200 / 78% / 2026-04-05 / 9:30)."""
REPLY_LAG = 3
"""A reply's rarest word competes with a user message's fourth: what the person said comes first."""
RANK_COST = 1.0
"""Each further word of one message counts as if it were e times as common (in idf, nats): breadth
across messages first, yet a message full of rare specifics keeps more than small talk does."""
PER_MESSAGE = 6
MIN_TOKENS, MAX_TOKENS = 60, 150
"""The per-chat cap grows with the number of messages between these."""
NAME_BONUS, NUMBER_BONUS = 1.0, 2.0
COMMON_SHARE, COMMON_MIN = 0.1, 3


@dataclass(frozen=True)
class Said:
    """One message of the chat, as the digest reads it."""

    role: str
    text: str
    created_at: datetime | None = None


class Rarity:
    """Inverse document frequency over a person's messages (lower-cased words)."""

    def __init__(self, documents: Iterable[str]) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        for doc in documents:
            self.n += 1
            self.df.update({m.group(0).lower() for m in TOKEN.finditer(doc)})

    def idf(self, word: str) -> float:
        """Higher is rarer; a word never seen is as rare as a word seen once."""
        return math.log((self.n + 1) / (self.df.get(word, 0) + 0.5))

    def common(self, word: str) -> bool:
        """In more than `COMMON_SHARE` of the person's messages (and more than `COMMON_MIN`): it says
        nothing about any one chat ("next", "thanks", the project's own name), so never kept."""
        return self.df.get(word, 0) > max(COMMON_MIN, COMMON_SHARE * self.n)


def cap_for(messages: Sequence[Said]) -> int:
    """Tokens a chat's digest may use: ~60 for a short chat, up to ~150 for a long one."""
    users = sum(1 for m in messages if m.role == "user")
    return max(MIN_TOKENS, min(MAX_TOKENS, 30 + 8 * users))


def _cost(word: str) -> int:
    """Tokens a word costs, roughly (the timeline counts the real ones)."""
    return max(1, math.ceil(len(word) / 5))


@dataclass(frozen=True)
class _Word:
    message: int
    position: int
    text: str
    score: float


def _candidates(i: int, text: str, rarity: Rarity) -> list[_Word]:
    """A message's words worth keeping, rarest first, each once."""
    seen: set[str] = set()
    words: list[_Word] = []
    after_stop = True
    for pos, m in enumerate(TOKEN.finditer(text)):
        raw = m.group(0)
        lower = raw.lower()
        start = after_stop
        after_stop = text[m.end() : m.end() + 1] in {".", "!", "?", "\n"}
        if (
            lower in seen
            or lower in STOP_WORDS
            or (len(raw) < 2 and not raw.isdigit())
            or rarity.common(lower)
        ):
            continue
        seen.add(lower)
        score = rarity.idf(lower)
        if raw[0].isdigit():
            score += NUMBER_BONUS
        elif raw[0].isupper() and not start:
            score += NAME_BONUS
        words.append(_Word(i, pos, raw, score))
    return sorted(words, key=lambda w: -w.score)


def extractive_digest(messages: Sequence[Said], rarity: Rarity, cap: int | None = None) -> str:
    """The chat's clauses, one per message that kept a word, in order: `asked ...; → reply ...`."""
    cap = cap_for(messages) if cap is None else cap
    ranked = [_candidates(i, m.text, rarity) for i, m in enumerate(messages)]
    order = sorted(
        (
            (RANK_COST * (rank + (0 if messages[i].role == "user" else REPLY_LAG)) - w.score, i, w)
            for i, words in enumerate(ranked)
            for rank, w in enumerate(words[:PER_MESSAGE])
        ),
        key=lambda t: t[:2],
    )
    kept: dict[int, list[_Word]] = {}
    used = 0
    for _, i, w in order:
        cost = _cost(w.text) + (1 if i not in kept else 0)  # a new clause costs its separator
        if used + cost > cap:
            continue
        kept.setdefault(i, []).append(w)
        used += cost
    clauses = []
    for i in sorted(kept):
        words = " ".join(w.text for w in sorted(kept[i], key=lambda w: w.position))
        clauses.append(words if messages[i].role == "user" else f"→ {words}")
    return "; ".join(clauses)
