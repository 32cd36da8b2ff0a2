"""litellm's bundled model map (context windows and prices of ~4,000 models), read as JSON.

The map ships inside litellm's wheel. Reading the file takes ~45 ms and ~5 MB; importing litellm to
reach it takes seconds and ~150 MB, which a server whose models are all OpenAI-compatible (called
directly) or offline never needs. `find_spec` locates the package without importing it.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"


def litellm_dir() -> Path | None:
    """The installed litellm package's directory, found without importing it (None if absent)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def model_map() -> dict[str, dict[str, Any]]:
    """Every model's entry, by the key litellm files it under (`gpt-4o`, `openai/gpt-4o`, ...);
    read once per process, empty when litellm is not installed."""
    base = litellm_dir()
    path = base / MAP_FILE if base else None
    if path is None or not path.exists():
        return {}
    entries = json.loads(path.read_text())
    return {name: info for name, info in entries.items() if isinstance(info, dict) and name != "sample_spec"}


def entry_for(model: str) -> dict[str, Any] | None:
    """A model's entry as litellm finds it for a plain call: the id as given (`openai/gpt-4o`,
    `gpt-4o`), else without its provider prefix (`anthropic/claude-x` -> `claude-x`)."""
    entries = model_map()
    found = entries.get(model)
    if found is None and "/" in model:
        found = entries.get(model.split("/", 1)[1])
    return found
