"""What a message stores for scoping, computed once when it is written and read back every turn.

Token counts are kept for the encodings that cover the models in use (`cl100k_base`, the fallback
for every non-OpenAI model, and `o200k_base`); a counter with another encoding counts on read.
Search terms are the shared analyzer's stems, indexed by the database's full-text engine.
"""

from __future__ import annotations

from typing import Any

from orrery.text import analyze
from orrery.tokens import TokenCounter

STORED_ENCODINGS = ("cl100k_base", "o200k_base")


def index_fields(content: str) -> tuple[dict[str, int], str]:
    """(content tokens per stored encoding, space-separated search terms) for a message's text."""
    counts = {name: TokenCounter("index", name, True).count(content) for name in STORED_ENCODINGS}
    return counts, " ".join(analyze(content))


def index_columns(contents: list[str]) -> list[dict[str, Any]]:
    """The stored scoping columns for messages written in bulk (imports, benchmarks), local
    embeddings included when the embedder is installed; the normal write path is `append_message`."""
    from orrery.memory.embeddings import DIMENSIONS, EMBED_CHARS, MODEL_NAME, load_embedder, to_bytes

    embedder = load_embedder()
    vectors = embedder.embed_once([c[:EMBED_CHARS] for c in contents]) if embedder and contents else None
    out: list[dict[str, Any]] = []
    for i, content in enumerate(contents):
        counts, terms = index_fields(content)
        vector = to_bytes(vectors[i]) if vectors is not None and content.strip() else None
        model, dim = (MODEL_NAME, DIMENSIONS) if vector is not None else (None, None)
        out.append(
            {
                "token_counts": counts,
                "search_terms": terms,
                "embedding": vector,
                "embedding_model": model,
                "embedding_dim": dim,
            }
        )
    return out
