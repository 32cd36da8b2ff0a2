"""Heavy provider imports happen in a worker thread, never on the event loop.

Importing litellm takes seconds (35 s was measured on a busy machine); done inside a request it
would freeze every other request of the process, `/health` included. The server starts the import
in a thread at startup, and every turn awaits it (again in a thread) before it builds a model.
"""

from __future__ import annotations

import asyncio
import importlib
import sys

from backend.config import Settings


def provider_module(model: str, settings: Settings) -> str | None:
    """The module a model string needs before its first request (None for `offline`)."""
    if model == "offline":
        return None
    return "pydantic_ai.models.openai" if settings.litellm_api_base else "litellm"


async def preload_provider(model: str, settings: Settings) -> None:
    """Import the model's provider in a worker thread (a no-op once it is loaded)."""
    module = provider_module(model, settings)
    if module is not None and not _loaded(module):
        await asyncio.to_thread(importlib.import_module, module)


def _loaded(module: str) -> bool:
    """Fully imported (a module another thread is still importing is in sys.modules already)."""
    found = sys.modules.get(module)
    return found is not None and not getattr(found.__spec__, "_initializing", False)


def start_preload(model: str, settings: Settings) -> asyncio.Task[None]:
    """Begin the import at startup without delaying it; a failure shows up on the first turn."""
    task = asyncio.create_task(preload_provider(model, settings))
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return task
