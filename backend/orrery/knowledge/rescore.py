"""BM25 over one project's knowledge base only, for SQLite.

FTS5's `bm25()` takes its statistics (document count, term frequencies, average length) from the
whole table, i.e. from every tenant's entries: another tenant adding a word would change the
caller's scores and order, which tells the caller that word exists elsewhere. So FTS5 only finds
the candidates, and they are scored here with statistics from the caller's project alone: the
document count of the project, document frequencies among its matching entries (every entry that
contains a term is a candidate, so these are the project's true frequencies), and the candidates'
average length. PostgreSQL's `ts_rank` needs no such step: it scores each document on its own.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orrery.text import stem

FIELD_WEIGHTS = (10.0, 8.0, 3.0, 1.0)
"""code, name, description, data: the same weights the FTS5 query used."""
_TOKEN = re.compile(r"[^\W_]+")
K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Fields:
    """The indexed text of one entry."""

    code: str
    name: str
    description: str | None
    data: Any

    def columns(self) -> tuple[str, str, str, str]:
        """Texts in FTS column order."""
        data = self.data if isinstance(self.data, str) else json.dumps(self.data or {})
        return self.code, self.name, self.description or "", data


def project_bm25(terms: Sequence[str], docs: Sequence[Fields], corpus_size: int) -> list[float]:
    """Weighted BM25 of each candidate for `terms` (higher is better), with project-only statistics.

    Each column is reduced to its distinct tokens with counts, and whether a token matches a term is
    decided once per distinct token of the candidates (stemming every occurrence was most of a
    search's time), with FTS5's prefix semantics (`"term"*`) and porter-like stemming on both
    sides."""
    if not docs or not terms:
        return [0.0] * len(docs)
    counted = [[Counter(_TOKEN.findall(text.lower())) for text in d.columns()] for d in docs]
    lengths = [sum(w * col.total() for w, col in zip(FIELD_WEIGHTS, cols, strict=True)) for cols in counted]
    average = sum(lengths) / len(lengths) or 1.0
    n = max(corpus_size, len(docs))
    scores = [0.0] * len(docs)
    vocabulary = {t for cols in counted for col in cols for t in col}
    for term in dict.fromkeys(terms):
        stemmed = stem(term)
        matching = {t for t in vocabulary if t.startswith(term) or stem(t).startswith(stemmed)}
        freqs = [
            sum(
                w * sum(col[t] for t in matching.intersection(col))
                for w, col in zip(FIELD_WEIGHTS, cols, strict=True)
            )
            for cols in counted
        ]
        df = sum(1 for f in freqs if f)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, tf in enumerate(freqs):
            if tf:
                scores[i] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[i] / average))
    return scores
