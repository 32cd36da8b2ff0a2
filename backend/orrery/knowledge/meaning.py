"""The second signal of knowledge search: what a message means, by the local sentence embedder.

Words alone miss paraphrases that share one common word with their entry ("Why don't we charge per
seat?" is DR-005 "Usage-based pricing over per-seat"). So the candidates full-text search found are
also compared with the message by meaning, as relevance compares messages: the local MiniLM
(`orrery.memory.embeddings`) embeds the message and each candidate's name and description, and the
candidate closest in meaning counts as direct (evidence `meaning`) when its cosine similarity is at
least `MEANING_MIN`. The threshold was set on the labelled set of `orrery eval knowledge` (no message
that should not load comes within 0.03 of it) and checked on its held-out part.

An entry's vector is a pure function of its text, so `embed_once` keeps it per process (the same in
every process: nothing to keep coherent); only new or edited entries cost an embedding. Without the
embedder (its weights not installed), search stays lexical and the result says so.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

from orrery.knowledge.search import SearchHit
from orrery.memory.embeddings import EMBED_CHARS, get_embedder

MEANING_MIN = 0.55
"""Cosine similarity from which the closest candidate counts as a direct hit."""
ASK_MIN = 0.3
"""Below this, a message whose words only loosely name entries is not about them ("I'm feeling a
bit tired today, long week" shares "week" with "Weekly active team"): no question is asked."""
ENTRY_CHARS = 600
"""An entry is compared by its name and the start of its description."""
LEXICAL_ONLY = "lexical only: the local embedder is not installed"


def entry_text(hit: SearchHit) -> str:
    """What an entry means: its name and the start of its description."""
    return f"{hit.name}: {hit.description or ''}"[:ENTRY_CHARS]


async def meaning_scores(message: str, hits: Sequence[SearchHit]) -> dict[uuid.UUID, float] | None:
    """Cosine similarity of each candidate to the message, or None without the embedder."""
    embedder = await get_embedder()
    if embedder is None:
        return None
    if not hits:
        return {}
    texts = [message[:EMBED_CHARS], *(entry_text(h) for h in hits)]
    rows = embedder.known(texts)  # the message was embedded as it was stored, the entries before
    if rows is None:
        rows = await asyncio.to_thread(embedder.embed_once, texts)
    similarity = rows[1:] @ rows[0]
    return {h.entry_id: float(s) for h, s in zip(hits, similarity, strict=True)}


def closest_in_meaning(scores: dict[uuid.UUID, float] | None) -> uuid.UUID | None:
    """The candidate closest to the message when it is close enough to count as direct."""
    if not scores:
        return None
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] >= MEANING_MIN else None
