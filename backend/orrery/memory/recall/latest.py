"""The latest value wins: among the best units recall offers, two statements about the same subject
with different values (numbers, dates, amounts) are paired at recall time, with the vectors and
search terms already in memory. When the newer one says it changed ("now", "new", "moved to",
"instead"...), it supersedes the older: it is lifted to at least the older's score and offered
just before it, and the older is marked (shown only with the newer, dated, "superseded by the
message of <date>"). Without update phrasing the two differ: both are marked, and shown together or
not at all, so the model can ask which holds.

Pairs are compared only among the first `PAIRED` units (one 24 x 24 product of vectors already in
memory) and only for short units, one message each (a long reply holds many values about many
subjects), never two a few turns apart in one chat (a message and its reply), nor two of chats
focused on different entities (each task's own deadline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from orrery.memory.scoping.ranking import NEIGHBOUR_HOPS

PAIRED = 24
"""The best offered units compared pairwise (the caps fill from these)."""
PAIR_WORDS = 90
"""Units longer than this (in stored search terms) are not paired: their values are about many things."""
SAME_SUBJECT = 0.55
"""Cosine similarity from which two statements sharing a word are about the same subject."""
CLOSE_SUBJECT = 0.75
"""Cosine similarity from which two statements are about the same subject with one shared word, and
from which two that differ without update phrasing are marked as differing (a value in a name,
"Witcher 3" against "Cyberpunk 2077", is not a contradiction)."""

_VALUE = re.compile(
    r"\$?\d[\d,]*(?:\.\d+)?\s*(?:%|percent\b|k\b|m\b)?"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
_UPDATE = re.compile(
    r"\b(?:now|new|newly|moved|move|changed?|changing|updated?|updating|instead|no longer|"
    r"actually|revised?|extended|pushed|postponed|delayed|rescheduled|raised|lowered|increased|"
    r"decreased|reduced|bumped|switched|correction|corrected|anymore|any more|latest|from now on|"
    r"went up|went down|dropped|grew|upped|cut)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mark:
    """How a unit relates to another offered unit on the same subject: `superseded` (this is the
    older; `other` the newer), `differs` (both shown or neither). `other` is the partner's key."""

    kind: str
    other: tuple[str, int]
    date: str


def unit_key(chat_id: object, seq: int) -> tuple[str, int]:
    """A unit's identity across the pool: its chat and first seq."""
    return (str(chat_id), seq)


@lru_cache(maxsize=8192)
def values_of(content: str) -> frozenset[str]:
    """The values a message states (numbers, amounts, percentages, dates, weekdays), normalised."""
    return frozenset(re.sub(r"[\s,.$]+", "", v.lower()) for v in _VALUE.findall(content))


@lru_cache(maxsize=8192)
def says_update(content: str) -> bool:
    """Whether a message says something changed."""
    return _UPDATE.search(content) is not None


def _day(at: datetime | None) -> str:
    return at.date().isoformat() if at else "an unknown date"


def mark_latest(offered: list[Any], vectors: Sequence[Any | None]) -> list[Any]:
    """`offered` (best first) with same-subject pairs of different values marked and reordered;
    `vectors[i]`: the unit's unit-length embedding, or None. Units are `ranked.Offered`."""
    short = [i for i in range(min(len(offered), PAIRED)) if vectors[i] is not None and _pairable(offered[i])]
    if len(short) < 2:
        return offered
    import numpy as np

    matrix = np.stack([v for i in short if (v := vectors[i]) is not None])
    closeness = np.triu(np.einsum("ik,jk->ij", matrix, matrix), 1)  # einsum: no BLAS threads
    when = {i: _when(offered[i]) for i in short}
    values = {i: values_of(offered[i].messages[0].content) for i in short}
    marks: dict[int, Mark] = {}
    lifts: dict[int, tuple[float, int]] = {}
    updating = np.asarray([says_update(offered[i].messages[0].content) for i in short])
    near = (closeness >= CLOSE_SUBJECT) | (
        (closeness >= SAME_SUBJECT) & (updating[:, None] | updating[None, :])
    )
    for x, y in np.argwhere(near).tolist():
        a, b = short[x], short[y]
        older, newer = (a, b) if when[a] <= when[b] else (b, a)
        if (
            _paired(marks, older, newer)
            or not (values[older] - values[newer] and values[newer] - values[older])
            or (closeness[x, y] < CLOSE_SUBJECT and len(_words(a, offered) & _words(b, offered)) < 2)
            or _other_names(offered[older].messages[0].content, offered[newer].messages[0].content)
        ):
            continue
        old, new = offered[older], offered[newer]
        if old.chat.id == new.chat.id and new.messages[0].seq - old.messages[0].seq <= NEIGHBOUR_HOPS:
            continue  # a question and its reply, not an update
        if old.chat.focus and new.chat.focus and old.chat.focus != new.chat.focus:
            continue  # chats about two entities: two deadlines, not one that moved
        new_key = unit_key(new.chat.id, new.messages[0].seq)
        old_key = unit_key(old.chat.id, old.messages[0].seq)
        update = says_update(new.messages[0].content)
        if not update and (closeness[x, y] < CLOSE_SUBJECT or not _words(a, offered) & _words(b, offered)):
            continue  # a contradiction is claimed only for statements very close in meaning
        if update:
            marks[older] = Mark("superseded", new_key, _day(new.messages[0].created_at))
            before = lifts.get(newer, (new.score, older))
            lifts[newer] = (max(old.score, before[0]), min(older, before[1]))
            marks.setdefault(newer, Mark("supersedes", old_key, _day(old.messages[0].created_at)))
        else:
            marks[older] = Mark("differs", new_key, _day(new.messages[0].created_at))
            marks[newer] = Mark("differs", old_key, _day(old.messages[0].created_at))
            lifts[newer] = lifts[older] = (max(old.score, new.score), min(older, newer))
    if not marks:
        return offered
    return _reordered(offered, marks, lifts)


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)")
_NOT_NAMES = frozenset(
    ("I", "Im", "Ive", "Id", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    + ("January", "February", "March", "April", "May", "June", "July", "August", "September")
    + ("October", "November", "December")
)


@lru_cache(maxsize=8192)
def names_of(content: str) -> frozenset[str]:
    """The names a message gives (capitalised words not opening a sentence; not days or months)."""
    return frozenset(n for n in _NAME.findall(content) if n.split()[0] not in _NOT_NAMES)


def _other_names(older: str, newer: str) -> bool:
    """Two statements naming different things ("the Birch budget" and "the Oak budget") are not
    about the same subject, however alike their words and meaning."""
    a, b = names_of(older), names_of(newer)
    return bool(a) and bool(b) and not a & b


def _pairable(unit: Any) -> bool:
    """One user or assistant message, short, stating a value."""
    return (
        len(unit.messages) == 1
        and unit.messages[0].role in ("user", "assistant")
        and sum(_length(t) for t in unit.terms) <= PAIR_WORDS
        and bool(values_of(unit.messages[0].content))
    )


def _paired(marks: dict[int, Mark], older: int, newer: int) -> bool:
    """Whether either is taken: an older one once superseded or differing stays so; a newer one may
    supersede several (the same value said twice before), and be superseded in turn."""
    taken = marks.get(older)
    return (taken is not None and taken.kind != "supersedes") or (
        newer in marks and marks[newer].kind != "supersedes"
    )


@lru_cache(maxsize=8192)
def _length(stored: str) -> int:
    """How many search terms a message has (repeats counted: a long reply repeats its words)."""
    return len(stored.split())


@lru_cache(maxsize=8192)
def _subject_words(stored: str) -> frozenset[str]:
    """A message's stored search terms without its numbers."""
    return frozenset(w for w in stored.split() if not w[:1].isdigit())


def _words(i: int, offered: list[Any]) -> frozenset[str]:
    terms = offered[i].terms
    return _subject_words(terms[0]) if len(terms) == 1 else frozenset()


def _when(unit: Any) -> tuple[Any, ...]:
    """When a unit's message was written, ties by chat date and seq (what orders older and newer)."""
    m = unit.messages[0]
    return (m.created_at or unit.chat.created_at, unit.chat.created_at, m.seq)


def _reordered(offered: list[Any], marks: dict[int, Mark], lifts: dict[int, tuple[float, int]]) -> list[Any]:
    """Lifted units take at least their partner's score and sit just before the first of the pair."""
    out = [replace(u, mark=marks[i]) if i in marks else u for i, u in enumerate(offered)]
    order: list[tuple[float, int, int]] = []  # (position to sit at, tie: lifted first, index)
    for i in range(len(out)):
        if i in lifts:
            score, at = lifts[i]
            out[i] = replace(out[i], score=score)
            order.append((min(at, i) - 0.5, 0 if out[i].mark and out[i].mark.kind != "differs" else 1, i))
        else:
            order.append((float(i), 1, i))
    return [out[i] for _, _, i in sorted(order)]
