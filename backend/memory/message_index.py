"""What a message stores for scoping, computed once when it is written and read back every turn.

Token counts are kept for the encodings that cover the models in use (`cl100k_base`, the fallback
for every non-OpenAI model, and `o200k_base`); a counter with another encoding counts on read.
Search terms are the shared analyzer's stems, indexed by the database's full-text engine.
"""

from __future__ import annotations

from backend.text import analyze
from backend.tokens import TokenCounter

STORED_ENCODINGS = ("cl100k_base", "o200k_base")


def index_fields(content: str) -> tuple[dict[str, int], str]:
    """(content tokens per stored encoding, space-separated search terms) for a message's text."""
    counts = {name: TokenCounter("index", name, True).count(content) for name in STORED_ENCODINGS}
    return counts, " ".join(analyze(content))
