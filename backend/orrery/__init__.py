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

import importlib.util
import os

# NumPy's OpenBLAS on one thread, read when NumPy first loads it (so set before any import of it):
# scoring's products are small (a few hundred vectors against one), a threaded BLAS spins its idle
# threads around each one (when the embedder ran in NumPy this cost ~20x the CPU), and a server runs
# its concurrency on requests. Set here rather than by threadpoolctl later: its scan of the loaded
# libraries runs Python inside the dynamic loader's lock, and so deadlocked a server whose main thread
# was importing an extension module at that moment.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _offline_litellm_defaults() -> None:
    """litellm reads its price map and tiktoken its encodings from litellm's wheel, not the network.

    Both are read when litellm is first imported, and every entry point (the CLI, the server, the MCP
    server, the testing kit, a user's own code) imports this package first, so they are set here once,
    before any import of litellm. `setdefault`: an operator's own values win. `find_spec` locates litellm
    without importing it (that takes ~2 s).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")
    for root in (spec.submodule_search_locations or []) if spec else []:
        bundled = os.path.join(root, "litellm_core_utils", "tokenizers")
        if os.path.isdir(bundled):
            os.environ["TIKTOKEN_CACHE_DIR"] = bundled
            return


_offline_litellm_defaults()

__version__ = "0.1.0"
__all__ = ["__version__"]
