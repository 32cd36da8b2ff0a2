"""The dense half of `relevance` on one turn: the configured model's query vector, and notes.

A history window holds only the configured model's vectors (`backend/orrery/memory/history.py`); the query
is embedded by that same model, so two models' vectors are never compared. A remote model gets a
short timeout; when it fails, is slow or answers a vector of another size, the turn ranks lexically
and the receipt's notes say so, as they say how many messages still wait for their vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from orrery.memory.embedding_models import LOCAL, EmbeddingError, EmbeddingModel, embedder_for
from orrery.memory.embeddings import LocalEmbedder, embedder_missing

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from orrery.memory.scoping.window import HistoryWindow


@dataclass
class DenseTurn:
    """What one turn's dense ranking uses (the configured model) and what it reports (notes)."""

    model: EmbeddingModel = LOCAL
    notes: list[str] = field(default_factory=list)


def turn_of(window: HistoryWindow) -> DenseTurn:
    """The turn holding `window`; a window made without a source's turn uses the local model."""
    turn = window.dense
    return turn if isinstance(turn, DenseTurn) else DenseTurn()


def model_unavailable(window: HistoryWindow) -> bool:
    """True, and noted once on the turn, when the configured model is the local one and it could not
    be loaded (its shipped files are missing): relevance then runs lexical-only."""
    turn = turn_of(window)
    if turn.model.remote or not embedder_missing():
        return False
    turn.notes.append(f"embeddings: {turn.model.name} is not available; relevance runs lexical-only")
    return True


def note_missing(window: HistoryWindow, query: str, start: int, end: int) -> None:
    """Note how many messages with text in rows `[start, end)` have no vector of the model yet (they
    rank lexically); the query's own message, when it is the newest, is not counted."""
    has, messages = window.with_vectors(), window.messages
    if end == len(messages) and end > start and messages[end - 1].content == query:
        end -= 1
    missing = sum(1 for i in range(start, end) if not has[i] and messages[i].content.strip())
    if not missing:
        return
    ranked = sum(1 for i in range(start, end) if has[i] or messages[i].content.strip())
    turn = turn_of(window)
    turn.notes.append(
        f"embeddings: {missing} of {ranked} messages have no {turn.model.name} vector yet; "
        "they were ranked lexically"
    )


async def embed_query(window: HistoryWindow, query: str) -> npt.NDArray[np.float32] | None:
    """The query's vector from the window's model; None when the model is not installed, or (noted)
    when a remote one fails, times out or answers a vector of another size than the window's."""
    turn = turn_of(window)
    embedder = await embedder_for(turn.model, query=True)
    if embedder is None:
        turn.notes.append(f"embeddings: {turn.model.name} is not available; relevance runs lexical-only")
        return None
    if isinstance(embedder, LocalEmbedder):  # inline: a thread hop would cost more
        vector: npt.NDArray[np.float32] = embedder.embed_once([query])[0]  # a question asked again
        return vector
    try:
        vector = (await embedder.embed_async([query]))[0]
    except EmbeddingError as exc:
        turn.notes.append(f"embeddings: the query has no vector ({exc}); relevance is lexical only this turn")
        return None
    if vector.shape[0] != window.dimensions:
        turn.notes.append(
            f"embeddings: {turn.model.name} answered a {vector.shape[0]}-dimension query vector where the "
            f"stored ones have {window.dimensions}; relevance is lexical only this turn"
        )
        return None
    return vector
