"""Orrery: a backend for chat assistants that work in context.

The layers, top to bottom (`.importlinter` enforces them; docs/architecture.md explains them):

- `orrery.app`        the composition root: plugin registration and the HTTP app (`orrery serve`).
- doors                `orrery.api`, `orrery.web`, `orrery.mcp_server`, `orrery.cli` (never each other).
- `orrery.services`   what the doors share: auth, limits, chat turns, the context view, tool calls.
- `orrery.agents`     the orchestrator, model factory and turn machinery (and `orrery.evaluation`).
- `tools`              the agents' tools.
- `orrery.context`    one turn's working context and receipt, strategies, `build_context`.
- domain               `orrery.memory`, `orrery.graph`, `orrery.knowledge`, `orrery.docs`.
- `orrery.repo`       the async data-access layer; every query is scoped to a user (beside `ops`).
- `orrery.db`         engine/session factory, ORM models, migration checks.
- base                 `config`, `errors`, `text`, `tokens`, `vocabulary`, `sections`, `roster`, ...
"""

import os

# NumPy's OpenBLAS on one thread, read when NumPy first loads it (so set before any import of it):
# scoring's products are small (a few hundred vectors against one), a threaded BLAS spins its idle
# threads around each one (when the embedder ran in NumPy this cost ~20x the CPU), and a server runs
# its concurrency on requests. Set here rather than by threadpoolctl later: its scan of the loaded
# libraries runs Python inside the dynamic loader's lock, and so deadlocked a server whose main thread
# was importing an extension module at that moment.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
__all__ = ["__version__"]
