"""What a message stores for scoping, computed once when it is written and read back every turn.

Token counts are kept for the encodings of the configured models (`ORRERY_MODEL` and its fallbacks)
among `STORED_ENCODINGS` (`cl100k_base`, the fallback for every non-OpenAI model, and `o200k_base`):
a server loads only the encodings it counts with (`o200k_base` alone is 40 MB). A counter with an
encoding the message has no count for (a per-turn model of another encoding) counts on read.
Search terms are the shared analyzer's stems, indexed by the database's full-text engine.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from orrery.config import Settings, get_settings
from orrery.text import analyze
from orrery.tokens import TokenCounter, encoding_name_for

STORED_ENCODINGS = ("cl100k_base", "o200k_base")
"""The encodings a message's count can be stored for (what a history window reads back)."""


def encodings_for(settings: Settings) -> tuple[str, ...]:
    """The stored encodings `settings`' models (the model and its fallbacks) count with."""
    models = [settings.model, *(f.strip() for f in settings.model_fallbacks.split(",") if f.strip())]
    used = {encoding_name_for(model) for model in models}
    return tuple(name for name in STORED_ENCODINGS if name in used)


@lru_cache(maxsize=1)
def written_encodings() -> tuple[str, ...]:
    """The encodings a new message's count is stored for: the process's configured models'."""
    return encodings_for(get_settings())


def index_fields(content: str) -> tuple[dict[str, int], str]:
    """(content tokens per written encoding, space-separated search terms) for a message's text."""
    counts = {name: TokenCounter("index", name, True).count(content) for name in written_encodings()}
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
