"""Heavy provider imports happen in a worker thread, never on the event loop.

Importing litellm takes seconds (35 s was measured on a busy machine); done inside a request it
would freeze every other request of the process, `/health` included. The server imports it in a
thread during startup, before it accepts requests (an import racing with requests would still stall
them: it holds the GIL), and every turn awaits the import of its model's provider (again in a
thread, a no-op once loaded) before it builds a model, so a per-turn model override is covered too.

Which provider: aiohttp for a model called directly or through a proxy (`agents.protocol`; the
`openai` SDK only when a request fails, for its exceptions), litellm for every other; a server whose
models are all direct, proxied or offline never imports litellm (~150 MB and seconds of CPU).
"""

from __future__ import annotations

import asyncio
import importlib
import logging

from orrery.agents import litellm_open, openai_body
from orrery.agents.protocol import client_for
from orrery.config import Settings

log = logging.getLogger("orrery.preload")
_warmed: set[str] = set()
"""Providers this process has loaded and warmed (a module imported by a forking supervisor, see
`services.warm`, is imported but not warmed: the warm-up runs in each worker)."""


def provider_module(model: str, settings: Settings) -> str | None:
    """The module a model string needs before its first request (None for `offline`)."""
    client = client_for(model, settings)
    if client == "offline":
        return None
    return "litellm" if client == "litellm" else "aiohttp"


def provider_modules(model: str, settings: Settings) -> list[str]:
    """The modules of `model` and its fallbacks (`ORRERY_MODEL_FALLBACKS`), each once."""
    chain = [model, *(f.strip() for f in settings.model_fallbacks.split(",") if f.strip())]
    found = (provider_module(name, settings) for name in chain if name != "offline")
    return list(dict.fromkeys(m for m in found if m is not None))


async def preload_provider(model: str, settings: Settings) -> None:
    """Import the providers of the model's chain in a worker thread (a no-op once loaded)."""
    for module in provider_modules(model, settings):
        if module not in _warmed:
            await asyncio.to_thread(_load, module, model)


def _load(module: str, model: str) -> None:
    """Import the provider and, for litellm, load what its first call would: the openai client's
    resources and its provider's handler (~550 more modules) through a mocked, offline completion."""
    importlib.import_module(module)
    if module == "litellm":
        _warm_litellm(model)
    _warmed.add(module)


def _warm_litellm(model: str) -> None:
    import litellm
    import openai

    litellm.suppress_debug_info = True  # its coloured banners print() outside the log's format
    openai_body.install()  # litellm sends through the OpenAI SDK
    _ = openai.AsyncOpenAI(api_key="warm-up", base_url="http://127.0.0.1:9").chat.completions
    litellm_open.install()
    try:
        litellm.get_llm_provider(model)
        asyncio.run(
            litellm.acompletion(model=model, messages=[{"role": "user", "content": "-"}], mock_response="-")
        )
    except Exception as exc:  # a warm-up only: the real first call reports real problems
        log.debug("litellm warm-up for %s: %s", model, exc)
