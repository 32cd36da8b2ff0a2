"""Which sentences of a conversation carry facts: salience for the offline summary and for fitting
any summary into its budget.

A sentence scores by its rare words (inverse frequency within the text being summarised), names
(capitalised words inside a sentence), numbers, amounts and dates, per token it costs; greetings and
small talk have none of these and fall to the bottom. Kept lines are shown in their original
(chronological) order, grouped by the day they were said.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from orrery.text import analyze
from orrery.tokens import TokenCounter

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][\w'-]+")
_NUMBER = re.compile(r"[£€$]?\d[\d:.,]*\s?(?:k|km|%)?")
_MONTH = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|tomorrow|yesterday|next \w+)\b"
)
MAX_SENTENCE_CHARS = 240


@dataclass(frozen=True)
class Line:
    """One candidate sentence with where it came from."""

    order: int
    day: str
    speaker: str
    text: str


def sentences(text: str) -> list[str]:
    """A message split into sentences (long ones cut at a word boundary)."""
    flat = " ".join(text.split())
    out = []
    for part in _SENTENCE.split(flat):
        part = part.strip()
        if len(part) > MAX_SENTENCE_CHARS:
            part = part[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
        if part:
            out.append(part)
    return out


def scores(lines: Sequence[Line], counter: TokenCounter) -> list[float]:
    """Salience per line (higher keeps), per token of cost."""
    docs = [set(analyze(line.text)) for line in lines]
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(doc)
    n = len(lines) or 1
    out = []
    for line, doc in zip(lines, docs, strict=True):
        rare = sum(math.log(1 + n / df[t]) for t in doc)
        facts = 2.0 * len(_NAME.findall(line.text)) + 2.5 * len(_NUMBER.findall(line.text))
        facts += 2.0 * len(_MONTH.findall(line.text))
        weight = 1.0 if line.speaker == "User" else 0.4
        out.append(weight * (rare + facts) / math.sqrt(max(4, counter.count(line.text))))
    return out


def render(lines: Sequence[Line], header: str) -> str:
    """Lines in order, one row per day: `[2025-03-14] User: ... | Assistant: ...`."""
    rows: list[str] = [header] if header else []
    for line in sorted(lines, key=lambda x: x.order):
        entry = f"{line.speaker}: {line.text}"
        prefix = f"[{line.day}] " if line.day else "- "
        if rows and line.day and rows[-1].startswith(prefix):
            rows[-1] += f" | {entry}"
        else:
            rows.append(prefix + entry)
    return "\n".join(rows)


def fit(lines: Sequence[Line], max_tokens: int, counter: TokenCounter, header: str = "") -> str:
    """The most salient lines whose rendering fits `max_tokens` ("" if not even the header fits)."""
    if max_tokens <= 0 or counter.count(header) > max_tokens:
        return ""
    ranked = sorted(zip(scores(lines, counter), lines, strict=True), key=lambda p: (-p[0], -p[1].order))
    kept: list[Line] = []
    used = counter.count(header)
    for _, line in ranked:
        cost = counter.count(f"[{line.day}] {line.speaker}: {line.text}") + 1
        if used + cost <= max_tokens:
            kept.append(line)
            used += cost
    text = render(kept, header)
    while kept and counter.count(text) > max_tokens:  # joins can tokenize differently; trim to fit
        kept.pop()  # the least salient of those kept
        text = render(kept, header)
    return text if counter.count(text) <= max_tokens else ""


def validated_summary(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """A summarizer's output checked: non-empty (else `ValueError`), and within `max_tokens` (dated
    lines are cut by salience, anything else at a word boundary)."""
    text = text.strip()
    if not text:
        raise ValueError("the summarizer returned an empty summary")
    if counter.count(text) <= max_tokens:
        return text
    lines = parse(text)
    fitted = fit(lines, max_tokens, counter) if lines else ""
    return fitted or counter.truncate(text, max_tokens)


_ROW = re.compile(r"^(?:\[(\d{4}-\d{2}-\d{2})\] |- )(.*)$")


def parse(summary: str | None, start: int = 0) -> list[Line]:
    """Lines back out of a rendered summary (so a running summary can be re-ranked and extended)."""
    out: list[Line] = []
    for row in (summary or "").splitlines():
        match = _ROW.match(row)
        if not match:
            continue
        day, body = match.group(1) or "", match.group(2)
        for entry in body.split(" | "):
            speaker, _, text = entry.partition(": ")
            if text:
                out.append(Line(start + len(out), day, speaker, text))
    return out
