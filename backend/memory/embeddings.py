"""A small local sentence embedder for relevance: WordLlama (MIT), whose weights ship in its wheel.

Nothing is downloaded at run time: the 256-dimension weights and the tokenizer are read from the
installed package (WordLlama's own loader looks for the tokenizer in the wrong folder and would try
the network, so it is bypassed). Loading takes ~1 s, so it happens once per process, lazily, in a
worker thread (`get_embedder`). Without the package, relevance is lexical only.

Vectors are L2-normalised float32; they are stored per message as float16 bytes (`to_bytes`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

DIMENSIONS = 256
MODEL_NAME = "wordllama-l2-supercat-256"
_lock = threading.Lock()


class LocalEmbedder:
    """Embeds texts with WordLlama's bundled weights, on the CPU, without network access."""

    name = MODEL_NAME

    def __init__(self, inference: Any) -> None:
        self._inference = inference

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One normalised row per text (shape `(len(texts), 256)`)."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.asarray(self._inference.embed(list(texts), norm=True), dtype=np.float32)

    async def embed_async(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`embed` in a worker thread (the event loop never waits on the CPU work)."""
        return await asyncio.to_thread(self.embed, texts)


@lru_cache(maxsize=1)
def load_embedder() -> LocalEmbedder | None:
    """The process's embedder, loaded on first use; None when WordLlama is not installed or broken."""
    with _lock:
        try:
            import wordllama  # type: ignore[import-untyped]
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference  # type: ignore[import-untyped]
        except ImportError:
            log.info("wordllama is not installed: relevance is lexical only")
            return None
        base = Path(wordllama.__file__).parent
        try:
            tokenizer = Tokenizer.from_file(str(base / "tokenizers" / "l2_supercat_tokenizer_config.json"))
            with safe_open(str(base / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
                weights = f.get_tensor("embedding.weight")
            return LocalEmbedder(WordLlamaInference(weights, tokenizer, binary=False))
        except Exception:  # a broken or changed wheel: fall back to lexical, say why once
            log.exception("the bundled WordLlama model could not be loaded: relevance is lexical only")
            return None


async def get_embedder() -> LocalEmbedder | None:
    """`load_embedder` off the event loop (the first call reads ~16 MB of weights); once loaded,
    no thread hop."""
    if load_embedder.cache_info().currsize:
        return load_embedder()
    return await asyncio.to_thread(load_embedder)


EMBED_CHARS = 4000
"""A message's embedding is taken from its first 4,000 characters (a long tool result costs no more)."""


def message_vector(embedder: LocalEmbedder, content: str) -> bytes | None:
    """The stored embedding of one message (~0.1 ms, inline: a thread hop would cost more)."""
    return to_bytes(embedder.embed([content[:EMBED_CHARS]])[0]) if content.strip() else None


def to_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as stored: float16, 512 bytes."""
    import numpy as np

    return vector.astype(np.float16).tobytes()


def from_bytes(blobs: Sequence[bytes]) -> npt.NDArray[np.float32]:
    """Stored vectors back as one float32 matrix (rows in order)."""
    import numpy as np

    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), DIMENSIONS).astype(np.float32)


def start_embedder_warmup() -> asyncio.Task[LocalEmbedder | None]:
    """Load the embedder in a worker thread at server start, so no request waits for it (and no
    write transaction holds its lock while the weights are read)."""
    task = asyncio.create_task(get_embedder())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return task
