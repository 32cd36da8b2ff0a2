"""Lexical tools shared by relevance scoring and search: tokenizing, stop words, BM25."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_MARKDOWN_CONTROL = re.compile(r"[`<>#*\[\]|\\]")

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves also get got go going want need please tell know like
    make think use using one two still yet ok okay hi hey hello thanks thank""".split()  # noqa: SIM905
)


def inline_data(text: str) -> str:
    """Stored text made safe to embed in a prompt: one line, markdown control characters escaped.

    Headings (`#`), fences (backticks), tags (`<>`), emphasis (`*`), links and tables cannot form,
    so text from the database reads as data, never as structure or instructions.
    """
    return _MARKDOWN_CONTROL.sub(lambda m: "\\" + m.group(0), " ".join(text.split()))


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stop words; tolerant of punctuation and case."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1]


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")


def stem(word: str) -> str:
    """A light suffix stripper, so `pricing`, `priced` and `prices` compare equal to `price`."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            return root + "y" if suffix in ("ies", "ied") else root.rstrip("e")
    return word.rstrip("e") if len(word) > 4 else word


def search_terms(text: str) -> list[str]:
    """Distinct alphanumeric search terms (stop words dropped), safe for FTS5 and tsquery syntax."""
    return list(dict.fromkeys(t for w in tokenize(text) for t in re.findall(r"[a-z0-9]+", w) if len(t) > 1))


def preview(text: str | None, limit: int = 150) -> str:
    """The first `limit` characters, cut at a word boundary, with an ellipsis when cut."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",.;:") + "…"


def bm25_scores(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    *,
    k1: float = 1.5,
    b: float = 0.75,
    corpus_size: int | None = None,
    avg_len: float | None = None,
) -> list[float]:
    """Okapi BM25 score of each tokenized document for the tokenized query.

    `corpus_size` and `avg_len` describe a larger corpus when `documents` are only the ones that
    can match (every other document scores zero and contains no query term).
    """
    if not documents or not query:
        return [0.0] * len(documents)
    n = corpus_size or len(documents)
    avg_len = avg_len or sum(len(d) for d in documents) / len(documents) or 1.0
    doc_freq: Counter[str] = Counter()
    for doc in documents:
        doc_freq.update(set(doc))
    terms = set(query)
    idf = {t: math.log(1 + (n - doc_freq[t] + 0.5) / (doc_freq[t] + 0.5)) for t in terms}
    scores = []
    for doc in documents:
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / avg_len)
        scores.append(sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in terms if tf[t]))
    return scores
