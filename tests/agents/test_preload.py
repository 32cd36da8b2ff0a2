"""Heavy provider imports run in a worker thread, never on the event loop (a fresh interpreter shows
which thread imported litellm)."""

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

asyncio.run(preload_provider("openai/gpt-4o-mini", Settings(_env_file=None)))
print("litellm" in sys.modules, importers)
"""


def test_litellm_is_imported_off_the_event_loop_thread() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "[False]"], out.stdout + out.stderr


def test_provider_module_per_model() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert provider_module("offline", settings) is None
    assert provider_module("anthropic/claude-sonnet-4-5", settings) == "litellm"
    proxied = settings.model_copy(update={"litellm_api_base": "http://127.0.0.1:4000"})
    assert provider_module("openai/gpt-4o-mini", proxied) == "pydantic_ai.models.openai"
