"""Heavy provider imports run in a worker thread, never on the event loop (a fresh interpreter shows
which thread imported litellm), and a model called directly or through a proxy loads aiohttp,
never litellm nor the openai SDK's client."""

from __future__ import annotations

import subprocess
import sys

from orrery.agents.preload import provider_module
from orrery.config import Settings

SCRIPT = """
import asyncio, sys, threading
importers = []

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            importers.append(threading.current_thread() is threading.main_thread())
        return None

sys.meta_path.insert(0, Spy())
from orrery.agents.preload import preload_provider
from orrery.config import Settings

overrides = dict(a.split("=", 1) for a in sys.argv[2:])
asyncio.run(preload_provider(sys.argv[1], Settings(_env_file=None, **overrides)))
print("litellm" in sys.modules, importers, "openai.resources.chat" in sys.modules, "aiohttp" in sys.modules)
"""


def _preload(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_litellm_is_imported_off_the_event_loop_thread() -> None:
    assert _preload("anthropic/claude-sonnet-4-5") == ["True", "[False]", "True", "True"]
    assert _preload("openai/gpt-4o-mini", "model_client=litellm") == ["True", "[False]", "True", "True"]


def test_a_direct_or_proxied_model_loads_aiohttp_and_neither_litellm_nor_the_openai_client() -> None:
    assert _preload("openai/gpt-4o-mini") == ["False", "[]", "False", "True"]
    proxied = _preload("some-alias", "litellm_api_base=http://127.0.0.1:4000")
    assert proxied == ["False", "[]", "False", "True"]


def test_a_litellm_fallback_is_preloaded_too() -> None:
    chain = _preload("openai/gpt-4o-mini", "model_fallbacks=anthropic/claude-sonnet-4-5")
    assert chain == ["True", "[False]", "True", "True"]


def test_provider_module_per_model() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert provider_module("offline", settings) is None
    assert provider_module("anthropic/claude-sonnet-4-5", settings) == "litellm"
    assert provider_module("openai/gpt-4o-mini", settings) == "aiohttp"
    proxied = settings.model_copy(update={"litellm_api_base": "http://127.0.0.1:4000"})
    assert provider_module("anthropic/claude-sonnet-4-5", proxied) == "aiohttp"
    everything = settings.model_copy(update={"model_client": "litellm"})
    assert provider_module("openai/gpt-4o-mini", everything) == "litellm"
