"""Lexical tools shared by relevance scoring and search: one analyzer (tokens, stop words, Snowball
stems) and BM25."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_MARKDOWN_CONTROL = re.compile(r"[`<>#*\[\]|\\\"]")
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_PARTS = re.compile(r"[a-z0-9]+")

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


def inline_data(text: str, *, keep_lines: bool = False) -> str:
    """The one data-quoting helper: stored text made safe to embed in a prompt.

    Invisible and direction-changing characters (zero-width, bidi overrides, Unicode tags, control
    characters) are removed; markdown control characters and `"` are escaped, so headings (`#`),
    fences (backticks), tags (`<>`), emphasis, links, tables and quoted values cannot form or be
    closed. The result is one line; with `keep_lines`, lines are kept (code snippets), each escaped
    the same way, so no line can start a heading or a tag. Text from the database reads as data,
    never as structure or instructions. Compatibility forms are folded first (NFKC), so a fullwidth
    `＃` or `＜` is escaped like the ASCII character a model would read it as.
    """
    visible = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    if keep_lines:
        return "\n".join(_escape(line.rstrip()) for line in visible.splitlines())
    return _escape(" ".join(visible.split()))


def _escape(line: str) -> str:
    return _MARKDOWN_CONTROL.sub(lambda m: "\\" + m.group(0), line)


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stop words; tolerant of punctuation and case."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1]


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter2) English stem: `process`/`processes` -> `process`, `news` -> `news`,
    `pricing`/`priced`/`prices` -> `price`. The one stemmer every lexical comparison uses."""
    return str(_stemmer().stemWord(word))


def analyze(text: str) -> list[str]:
    """The one text analyzer (BM25, stored message search terms, keyword matching): lowercase
    alphanumeric words, stop words dropped, each stemmed; hyphenated words count by their parts."""
    return [stem(part) for word in tokenize(text) for part in _PARTS.findall(word) if len(part) > 1]


def search_terms(text: str) -> list[str]:
    """Distinct alphanumeric search terms (stop words dropped), safe for FTS5 and tsquery syntax."""
    return list(dict.fromkeys(t for w in tokenize(text) for t in _PARTS.findall(w) if len(t) > 1))


@lru_cache(maxsize=2048)
def stems_of(text: str) -> frozenset[str]:
    """The stems of a text's search terms, kept per process for texts seen again (an entry's text
    is judged on every search that finds it; a pure function, so nothing to keep coherent)."""
    return frozenset(stem(w) for w in search_terms(text))


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
    corpus: tuple[int, float, Mapping[str, int]] | None = None,
) -> list[float]:
    """Okapi BM25 score of each tokenized document for the tokenized query. `corpus` = (documents,
    average length, document frequency per term) when the documents are candidates drawn from a
    larger collection whose statistics the database counted."""
    if not documents or not query:
        return [0.0] * len(documents)
    if corpus is None:
        doc_freq: Mapping[str, int] = Counter(t for d in documents for t in set(d))
        n, avg_len = len(documents), sum(len(d) for d in documents) / len(documents) or 1.0
    else:
        n, avg_len, doc_freq = corpus
    terms = set(query)
    idf = {t: math.log(1 + (n - doc_freq.get(t, 0) + 0.5) / (doc_freq.get(t, 0) + 0.5)) for t in terms}
    scores = []
    for doc in documents:
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / (avg_len or 1.0))
        scores.append(sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in terms if tf[t]))
    return scores
