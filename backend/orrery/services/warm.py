"""What a server process loads once and only reads afterwards, loaded before its workers exist.

`orrery serve --workers N` loads it in the supervising process, then forks the workers instead of
starting fresh interpreters, so they share it copy-on-write: the embedder's ONNX session (~60 MB),
tiktoken's encodings (~47 MB for `o200k_base`), the model map, the provider's SDK and the modules
they import. Native buffers are never written again; Python objects are frozen out of the garbage
collector's walks (`gc.freeze`), which would otherwise touch, and so copy, every page. Each worker's
start-up then finds them loaded (its own warm-ups are no-ops); the provider's warm-up call (a mocked
completion) still runs in each worker, since it is not safe to fork a process that made one.
"""

from __future__ import annotations

import gc
import importlib

from orrery.agents.preload import provider_modules
from orrery.config import Settings
from orrery.memory.embedding_models import embedding_model
from orrery.memory.message_index import encodings_for
from orrery.model_map import model_map
from orrery.ops.heap import release_free_memory
from orrery.tokens import encoding_name_for, load_encodings

SHARED_IMPORTS = (
    "fastapi",
    "orrery.agents.orchestrator",
    "orrery.services.turns",
    "orrery.services.tool_calls",
)
"""The bulk of a worker's imports (FastAPI, pydantic-ai, SQLAlchemy and the ORM, the agents)."""


def load_shared(settings: Settings) -> None:
    """Load what the workers of a server with `settings` will share (in the calling thread)."""
    for module in (*SHARED_IMPORTS, *provider_modules(settings.model, settings)):
        importlib.import_module(module)
    load_encodings({*encodings_for(settings), encoding_name_for(settings.model)})
    model_map()
    if not embedding_model(settings).remote:
        from orrery.memory.embeddings import load_embedder

        load_embedder()
    gc.collect()
    gc.freeze()
    release_free_memory()
