"""Orrery's testing kit: fixtures, mocked LLMs and context assertions for apps built on Orrery.

Installed with Orrery, it is a pytest plugin (entry point `pytest11: orrery`): the fixtures
`orrery_settings`, `orrery_db`, `orrery_user`, `orrery_demo`, `orrery_model`, `orrery_orchestrator`
and `orrery_client` are there in every test, no conftest needed (pytest-asyncio for the async ones,
in strict or auto mode). Set pytest-asyncio's fixture loop scope, or it warns on every run:

```toml
[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
```

`ScriptedModel(on(trigger, call=(tool, args), say=...))` scripts the model; a fixture's value reaches
a script through `{name}` placeholders filled from `model.values` when the model is asked (or through
callables of the request), and `model.tool_calls` lists each call made as `Called(name, args)`. A
turn's own record, `TurnOutcome.tool_calls`, also carries each call's result.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real imports happen on first use, so loading the pytest plugin stays cheap
    from backend.testing.chat import TestOrchestrator, TurnOutcome
    from backend.testing.conformance import (
        ConformanceReport,
        check_strategy_conformance,
        run_strategy_conformance,
    )
    from backend.testing.history import MemoryHistory, MemorySummaryStore, tool_conversation
    from backend.testing.models import Called, Rule, ScriptedModel, Seen, on
    from backend.testing.plugin import KitUser
    from backend.testing.receipts import (
        assert_excluded,
        assert_included,
        assert_message_dropped,
        assert_message_kept,
        assert_within_budget,
        section,
    )

_WHERE = {
    "Called": "backend.testing.models",
    "ConformanceReport": "backend.testing.conformance",
    "KitUser": "backend.testing.plugin",
    "MemoryHistory": "backend.testing.history",
    "MemorySummaryStore": "backend.testing.history",
    "Rule": "backend.testing.models",
    "ScriptedModel": "backend.testing.models",
    "Seen": "backend.testing.models",
    "TestOrchestrator": "backend.testing.chat",
    "TurnOutcome": "backend.testing.chat",
    "assert_excluded": "backend.testing.receipts",
    "assert_included": "backend.testing.receipts",
    "assert_message_dropped": "backend.testing.receipts",
    "assert_message_kept": "backend.testing.receipts",
    "assert_within_budget": "backend.testing.receipts",
    "check_strategy_conformance": "backend.testing.conformance",
    "on": "backend.testing.models",
    "run_strategy_conformance": "backend.testing.conformance",
    "section": "backend.testing.receipts",
    "tool_conversation": "backend.testing.history",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'backend.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


__all__ = [
    "Called",
    "ConformanceReport",
    "KitUser",
    "MemoryHistory",
    "MemorySummaryStore",
    "Rule",
    "ScriptedModel",
    "Seen",
    "TestOrchestrator",
    "TurnOutcome",
    "assert_excluded",
    "assert_included",
    "assert_message_dropped",
    "assert_message_kept",
    "assert_within_budget",
    "check_strategy_conformance",
    "on",
    "run_strategy_conformance",
    "section",
    "tool_conversation",
]
