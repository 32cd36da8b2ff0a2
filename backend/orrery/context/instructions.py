"""The "Standing Instructions" part of the system prompt: what the person asked to hold in every
later chat (instructions and preferences), dated, with ids, quoted as they said them.

They are read in the same long-term-memory statement as the facts (no round trip of their own) and
have their own budget (`instructions`). All are kept while they fit, newest first; over the budget
they are ranked by how many of the message's word stems they share (and by meaning, when the
message's vector is at hand), then by recency, and the receipt lists what was left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from orrery.memory.embeddings import EMBED_CHARS, load_embedder
from orrery.memory.injection import data_text
from orrery.memory.long_term import FactView
from orrery.memory.standing import intents
from orrery.sections import ContextSection, ReceiptItem
from orrery.text import stems_of
from orrery.tokens import TokenCounter

Fitter = Callable[[ContextSection, int, TokenCounter], tuple[str, Any]]
"""The prompt assembly's own fitter of a section (whole items in order while they fit)."""

TITLE = "Standing Instructions"
HEADING_NOTE = (
    "_The person's own standing instructions and preferences, quoted as they said them in earlier "
    "chats. Follow them where they apply to this conversation._"
)


def _line(item: FactView) -> str:
    scope = "every project" if item.everywhere else "this project"
    named = item.subject if item.subject in intents().topics else None  # "answer length", not its words
    about = f" about {data_text(named, 100)}" if named else ""
    said = item.created_at.date().isoformat()
    return f"- [{item.kind} {item.id}]{about} (said {said}, {scope}): {data_text(item.text)}"


def relevance(query: str | None, item: FactView) -> float:
    """The share of the instruction's word stems the message shares (0 without a message)."""
    if not query:
        return 0.0
    mine = stems_of(item.text)
    return len(mine & stems_of(query)) / len(mine) if mine else 0.0


def meaning(query: str | None, standing: list[FactView]) -> list[float] | None:
    """Each instruction's cosine to the message by the local embedder, when the message's vector is
    at hand (computed when it was stored, in this process); the instructions' own vectors are
    computed once per process. None otherwise: the ranking is lexical."""
    embedder = load_embedder() if load_embedder.cache_info().currsize else None
    if embedder is None or not query:
        return None
    asked = embedder.known([query[:EMBED_CHARS]])
    if asked is None:
        return None
    rows = embedder.embed_once([item.text for item in standing])
    return [float(x) for x in rows @ asked[0]]


def ranked(query: str | None, standing: list[FactView]) -> list[float]:
    """The score each instruction is ranked by when they do not all fit: word overlap with the
    message, and the embedder's cosine when it is at hand (their mean)."""
    words = [relevance(query, item) for item in standing]
    vectors = meaning(query, standing)
    return words if vectors is None else [(w + v) / 2 for w, v in zip(words, vectors, strict=True)]


def instructions_section(
    standing: list[FactView], query: str | None, budget: int, counter: TokenCounter
) -> tuple[ContextSection, dict[str, float | None]]:
    """The section (the heading's note aside: `finish` adds it), its items ordered so the fitter
    keeps the right ones: newest first when all fit, else the most relevant to `query` first (then
    the newest); and each item's relevance score by receipt key (None when all fit)."""
    lines = [(f"{item.kind}:{item.id}", _line(item)) for item in standing]
    tokens = [counter.count(text) for _, text in lines]
    order = list(range(len(standing)))
    scores: dict[str, float | None] = {key: None for key, _ in lines}
    if sum(tokens) + len(tokens) + counter.count(f"## {TITLE}\n") > budget:
        found = ranked(query, standing)
        order.sort(key=lambda i: -found[i])  # stable: `standing` is newest first
        scores = {lines[i][0]: round(found[i], 3) for i in order}
    section = ContextSection(
        "instructions", TITLE, [lines[i] for i in order], tokens=[tokens[i] for i in order]
    )
    return section, scores


def note_tokens(counter: TokenCounter) -> int:
    """What the heading's note costs (taken from the budget before the items are fitted)."""
    return counter.count(HEADING_NOTE) + 1


def finish(
    text: str, receipt: Any, scores: dict[str, float | None], counter: TokenCounter
) -> tuple[str, Any]:
    """The fitted section with the note under its heading, and its receipt with each item's score
    and why one was left out."""

    def scored(item: ReceiptItem, reason: str) -> ReceiptItem:
        return ReceiptItem(item.kind, item.key, item.tokens, reason, scores.get(item.key))

    left = "over budget: less related to this message, or older"
    excluded = [scored(i, left if i.reason == "over budget" else i.reason) for i in receipt.excluded]
    included = [scored(i, i.reason) for i in receipt.included]
    if text:
        head, _, rest = text.partition("\n")
        text = f"{head}\n{HEADING_NOTE}\n{rest}"
    extra = note_tokens(counter) if text else 0
    return text, replace(
        receipt,
        budget=receipt.budget + note_tokens(counter),
        tokens=receipt.tokens + extra,
        included=included,
        excluded=excluded,
    )


def fit_instructions(
    standing: list[FactView], query: str | None, budget: int, counter: TokenCounter, fit: Fitter
) -> tuple[str, Any]:
    """The part of the prompt and its receipt (`instructions`), fitted by `fit` to `budget`."""
    section, scores = instructions_section(standing, query, budget - note_tokens(counter), counter)
    text, receipt = fit(section, budget - note_tokens(counter), counter)
    return finish(text, receipt, scores, counter)
