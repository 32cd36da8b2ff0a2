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

`check_strategy_conformance(MyStrategy)` checks a scoping strategy's contract;
`check_tool_conformance(db, settings, MY_TOOL)` checks that a plugin tool shows stored text quoted.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real imports happen on first use, so loading the pytest plugin stays cheap
    from orrery.testing.chat import TestOrchestrator, TurnOutcome
    from orrery.testing.conformance import (
        ConformanceReport,
        check_strategy_conformance,
        run_strategy_conformance,
    )
    from orrery.testing.history import MemoryHistory, MemorySummaryStore, tool_conversation
    from orrery.testing.models import Called, Rule, ScriptedModel, Seen, on
    from orrery.testing.plugin import KitUser
    from orrery.testing.receipts import (
        assert_excluded,
        assert_included,
        assert_message_dropped,
        assert_message_kept,
        assert_within_budget,
        section,
    )
    from orrery.testing.tool_conformance import (
        ToolConformanceReport,
        check_tool_conformance,
        run_tool_conformance,
    )

_WHERE = {
    "Called": "orrery.testing.models",
    "ConformanceReport": "orrery.testing.conformance",
    "KitUser": "orrery.testing.plugin",
    "MemoryHistory": "orrery.testing.history",
    "MemorySummaryStore": "orrery.testing.history",
    "Rule": "orrery.testing.models",
    "ScriptedModel": "orrery.testing.models",
    "Seen": "orrery.testing.models",
    "TestOrchestrator": "orrery.testing.chat",
    "TurnOutcome": "orrery.testing.chat",
    "assert_excluded": "orrery.testing.receipts",
    "assert_included": "orrery.testing.receipts",
    "assert_message_dropped": "orrery.testing.receipts",
    "assert_message_kept": "orrery.testing.receipts",
    "assert_within_budget": "orrery.testing.receipts",
    "check_strategy_conformance": "orrery.testing.conformance",
    "ToolConformanceReport": "orrery.testing.tool_conformance",
    "check_tool_conformance": "orrery.testing.tool_conformance",
    "run_tool_conformance": "orrery.testing.tool_conformance",
    "on": "orrery.testing.models",
    "run_strategy_conformance": "orrery.testing.conformance",
    "section": "orrery.testing.receipts",
    "tool_conversation": "orrery.testing.history",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'orrery.testing' has no attribute {name!r}")
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
    "ToolConformanceReport",
    "TurnOutcome",
    "assert_excluded",
    "assert_included",
    "assert_message_dropped",
    "assert_message_kept",
    "assert_within_budget",
    "check_strategy_conformance",
    "check_tool_conformance",
    "on",
    "run_strategy_conformance",
    "run_tool_conformance",
    "section",
    "tool_conversation",
]
