"""Checkable evidence that a search hit is *direct*: what auto-context's confidence counts.

Full-text search finds candidates by word prefix ("us" finds "usage"); that is fine for finding,
never for deciding. A hit is direct only on evidence one can check against the entry's own text:

- **code**: the message names the entry's code (`BR-015`);
- **name**: the message holds the entry's name, or at least two thirds (and two) of its name's
  content words ("the seat minimum rule" names "Workspace seat minimum"), or the name's first
  three words or more as one phrase (`name prefix`: "the Zephyr invoice reconciliation rule" names
  each of eleven entries called "Zephyr invoice reconciliation rule for ...");
- **coverage**: whole-word (stemmed) matches carry at least half of the message's content weight
  (each word weighed by its rarity in the project's KB: a word no entry holds weighs most), and
  the match is either two or more words or one *distinctive* word (held by at most a sixth of
  the KB's entries). One common word alone ("team", "pricing") is never direct;
- **long task**: three or more matched words covering a quarter of the weight.

A misspelled message word that no entry holds is read as the candidate's word one edit away
("biling" -> "billing") when it has five letters or more. Conversational words (greetings,
thanks, pronouns, contraction stubs) are not content: a message made only of them is small talk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orrery.knowledge.search import SearchHit
from orrery.text import STOP_WORDS, search_terms, stem, stems_of

DIRECT_COVERAGE = 0.5
LONG_MATCH_TERMS = 3
LONG_MATCH_COVERAGE = 0.25
NAME_SHARE = 2 / 3
COMMON_SHARE = 1 / 6
"""A word held by more than this share of the KB's entries (and by 3+) is common, not distinctive."""
FUZZY_MIN_LENGTH = 5
NAME_PREFIX_WORDS = 3
"""A phrase of the message that is the first 3+ words of an entry's name (2+ of them content) names it."""
_WORD = re.compile(r"[^\W_]+")
CONVERSATIONAL = frozenset(
    """us let lets don doesn didn isn aren wasn weren won wouldn shouldn couldn can haven hasn hadn ll
    ve re what that there here it he she they who where how when why hello hiya howdy greetings
    morning afternoon evening night today tonight weekend thank thanks thx ty cheers
    appreciate appreciated great good nice cool awesome perfect brilliant lovely wonderful fantastic
    fine well sure yes yeah yep yup nope ok okay alright right bye goodbye later soon welcome sorry
    glad happy hope hoping doing going ready everyone folks again back much lot lots bit
    really just quick question help helpful work""".split()  # noqa: SIM905
)


def content_terms(message: str) -> list[str]:
    """Search terms minus stop words and conversational words (what a message is about)."""
    return [t for t in search_terms(message) if t not in STOP_WORDS and t not in CONVERSATIONAL]


def is_small_talk(message: str) -> bool:
    """Words, but none of them content: greetings, thanks, pleasantries."""
    return bool(search_terms(message)) and not content_terms(message)


def entry_words(hit: SearchHit) -> frozenset[str]:
    """Stems of the entry's code, name, description and string data values (not the data's keys)."""
    values = [str(v) for v in hit.data.values() if isinstance(v, str)]
    values += [str(p) for v in hit.data.values() if isinstance(v, list) for p in v if isinstance(p, str)]
    return stems_of(" ".join([hit.code, hit.name, hit.description or "", *values]))


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]])
    short, long = sorted((a, b), key=len)
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def correct_terms(terms: list[str], hits: Iterable[SearchHit]) -> list[str]:
    """Each term no candidate holds, replaced by a candidate's word one edit away (if any)."""
    vocabulary: set[str] = set()
    for hit in hits:
        vocabulary |= {w for w in search_terms(f"{hit.name} {hit.description or ''}")}
    stems = {stem(w) for w in vocabulary}
    fixed = []
    for term in terms:
        if stem(term) in stems or len(term) < FUZZY_MIN_LENGTH:
            fixed.append(term)
            continue
        near = sorted(w for w in vocabulary if _one_edit(term, w))
        fixed.append(near[0] if near else term)
    return list(dict.fromkeys(fixed))


@dataclass(frozen=True)
class Weights:
    """Per content term: its idf weight and whether it is distinctive in this KB."""

    idf: dict[str, float]
    distinctive: frozenset[str]

    @classmethod
    def of(cls, entries: int, counts: dict[str, int]) -> Weights:
        """BM25 idf over the project's KB (whole-word document counts)."""
        idf = {t: math.log(1 + (entries - n + 0.5) / (n + 0.5)) for t, n in counts.items()}
        common = {t for t, n in counts.items() if n >= 3 and n > COMMON_SHARE * entries}
        return cls(idf, frozenset(t for t, n in counts.items() if n > 0 and t not in common))


@dataclass(frozen=True)
class Evidence:
    """Why a hit is direct (`reason`), or not (`reason` None), and what it matched."""

    matched: tuple[str, ...]
    coverage: float
    reason: str | None


def words_of(text: str) -> list[str]:
    """Lowercase words in order (for phrase matching)."""
    return _WORD.findall(text.lower())


def names_by_prefix(name: str, message_words: Sequence[str]) -> bool:
    """Whether the message holds the name's first NAME_PREFIX_WORDS+ words as one phrase, two of
    them content words."""
    head = words_of(name)[:NAME_PREFIX_WORDS]
    if len(head) < NAME_PREFIX_WORDS or len(content_terms(" ".join(head))) < 2:
        return False
    said, n = list(message_words), len(head)
    return any(said[i : i + n] == head for i in range(len(said) - n + 1))


def judge(
    hit: SearchHit, terms: list[str], codes: list[str], weights: Weights, message_words: Sequence[str] = ()
) -> Evidence:
    """The evidence for one hit (see the module docstring)."""
    words = entry_words(hit)
    matched = tuple(t for t in terms if stem(t) in words)
    total = sum(weights.idf.get(t, 0.0) for t in terms)
    share = sum(weights.idf.get(t, 0.0) for t in matched) / total if total else 0.0
    if hit.code in codes:
        return Evidence(matched, share, "code")
    name = {stem(t) for t in content_terms(hit.name)} or {stem(t) for t in search_terms(hit.name)}
    said = {stem(t) for t in terms}
    named = len(name & said)
    if name and (named == len(name) or (named >= 2 and named >= NAME_SHARE * len(name))):
        return Evidence(matched, share, "name")
    if names_by_prefix(hit.name, message_words):
        return Evidence(matched, share, "name prefix")
    strong = len(matched) >= 2 or any(t in weights.distinctive for t in matched)
    if share >= DIRECT_COVERAGE and strong:
        return Evidence(matched, share, "coverage")
    if len(matched) >= LONG_MATCH_TERMS and share >= LONG_MATCH_COVERAGE:
        return Evidence(matched, share, "long task")
    return Evidence(matched, share, None)
