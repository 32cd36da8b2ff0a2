"""The chunk every docs parser produces, and the keyword helpers they share."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from orrery.text import tokenize

SNIPPET_CHARS = 8000
"""A safety cap for pathological sources; real snippets are quoted whole."""


@dataclass
class Chunk:
    """One indexed piece of documentation."""

    kind: str
    key: str
    title: str
    content: str
    source_path: str
    epic: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    keywords: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def keywords_of(text: str, limit: int = 12) -> list[str]:
    """The most frequent meaningful words of a text (stemmed for matching, shown as written)."""
    counts = Counter(w for w in tokenize(text) if len(w) > 2 and not w.isdigit())
    return [w for w, _ in counts.most_common(limit)]


def split_identifier(name: str) -> list[str]:
    """`PriceEstimateRequest` / `price_estimate` / `/pricing/{id}` as lowercase words."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("/", " ").replace("-", " ")
    return [w.lower() for w in words.split() if w and not w.startswith("{")]


def model_chunk(name: str, fields: list[str], snippet: str, source: str) -> Chunk:
    """A DB model chunk: its name and fields are its keywords."""
    return Chunk(
        "model",
        name,
        name,
        snippet[:SNIPPET_CHARS],
        source,
        data={"fields": fields},
        keywords=list(dict.fromkeys(split_identifier(name) + [f.lower() for f in fields])),
    )


def schema_chunk(name: str, fields: list[str], snippet: str, source: str, library: str) -> Chunk:
    """A validation-schema chunk (pydantic, zod)."""
    return Chunk(
        "schema",
        name,
        name,
        snippet[:SNIPPET_CHARS],
        source,
        data={"fields": fields, "library": library},
        keywords=list(dict.fromkeys(split_identifier(name) + [f.split(".")[-1].lower() for f in fields])),
    )
