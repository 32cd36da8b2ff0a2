"""Which model embeds messages for `relevance` (`ORRERY_EMBEDDING_MODEL`), and how it is reached.

`local` (the default) is the bundled all-MiniLM-L6-v2 (`backend/orrery/memory/embeddings.py`): offline,
fast enough to embed a message as it is written. Any other value is a litellm embedding model id
(`openai/text-embedding-3-small`) called over the network through `litellm.aembedding` — never in a
turn's write path: a background job embeds its messages (`backend/orrery/memory/embedding_store.py`), and a
turn only asks it for the query's vector, with a short timeout.

Every stored vector carries its model's name and size, so two models' vectors are never compared.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from orrery.memory.embeddings import DIMENSIONS as LOCAL_DIMENSIONS
from orrery.memory.embeddings import MODEL_NAME as LOCAL_NAME
from orrery.memory.embeddings import get_embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from orrery.config import Settings

LOCAL_ALIASES = ("local", LOCAL_NAME)


class EmbeddingError(Exception):
    """A remote model failed, timed out or answered vectors that cannot be used."""


@dataclass(frozen=True)
class EmbeddingModel:
    """The configured embedding model: its stored name and how to reach it when remote."""

    name: str = LOCAL_NAME
    api_base: str | None = None
    api_key: str | None = None
    query_timeout: float = 2.0
    batch_timeout: float = 30.0
    job_attempts: int = 5

    @property
    def remote(self) -> bool:
        return self.name != LOCAL_NAME


LOCAL = EmbeddingModel()


def embedding_model(settings: Settings) -> EmbeddingModel:
    """The model `settings` configure (`local` means the bundled MiniLM)."""
    name = settings.embedding_model.strip()
    if not name or name in LOCAL_ALIASES:
        return LOCAL
    return EmbeddingModel(
        name,
        settings.embedding_api_base,
        settings.embedding_api_key,
        settings.embedding_query_timeout_seconds,
        settings.embedding_batch_timeout_seconds,
        settings.jobs_max_attempts,
    )


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, one per text."""

    name: str

    async def embed_async(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


class RemoteEmbedder:
    """A litellm embedding model; every call is bounded by `timeout` seconds, retries included (the
    provider's own client may retry a 5xx whatever litellm is told, so the bound is ours)."""

    def __init__(self, model: EmbeddingModel, timeout: float) -> None:
        self.model, self.name, self.timeout = model, model.name, timeout

    async def embed_async(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One normalised row per text; `EmbeddingError` when the provider fails, is slower than the
        timeout, or answers rows of unequal size."""
        litellm = await asyncio.to_thread(_litellm)  # a first import takes seconds: not on the loop
        try:
            response = await asyncio.wait_for(self._call(litellm, list(texts)), self.timeout)
        except TimeoutError:
            raise EmbeddingError(f"{self.name} did not answer within {self.timeout:g} s") from None
        except Exception as exc:  # litellm maps every provider failure to its own exception types
            raise EmbeddingError(f"{self.name} failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
        return _normalised([_row(item) for item in response.data], len(texts), self.name)

    async def _call(self, litellm: Any, texts: list[str]) -> Any:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "num_retries": 0, "max_retries": 0}
        if self.model.api_base:
            kwargs["api_base"] = self.model.api_base
        if self.model.api_key:
            kwargs["api_key"] = self.model.api_key
        return await litellm.aembedding(model=self.name, input=texts, **kwargs)


def _litellm() -> Any:
    """litellm, imported on first use (`import orrery` chose its bundled price map: no network)."""
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _row(item: Any) -> list[float]:
    return list(item["embedding"] if isinstance(item, dict) else item.embedding)


def _normalised(rows: list[list[float]], expected: int, name: str) -> npt.NDArray[np.float32]:
    import numpy as np

    sizes = {len(r) for r in rows}
    if len(rows) != expected or len(sizes) != 1 or 0 in sizes:
        raise EmbeddingError(f"{name} answered {len(rows)} vectors of sizes {sorted(sizes)} for {expected}")
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


async def embedder_for(model: EmbeddingModel, *, query: bool = False) -> Embedder | None:
    """The embedder of `model` (None: the local one is not installed); a remote one is bounded by
    the query timeout for a turn's query, else by the batch timeout."""
    if not model.remote:
        return await get_embedder()
    return RemoteEmbedder(model, model.query_timeout if query else model.batch_timeout)


def expected_dimensions(model: EmbeddingModel) -> int | None:
    """The vector size `model` is known to answer (the local one's, or litellm's model map), if any."""
    if not model.remote:
        return LOCAL_DIMENSIONS
    try:
        size = _litellm().get_model_info(model.name).get("output_vector_size")
    except Exception:  # not in litellm's map: the first stored vector sets the size
        return None
    return int(size) if size else None
