"""The testing kit's tool conformance check: the example plugin's tool passes (it quotes every
stored string), and a tool that prints a task's state as it is fails (issue 42, item 13)."""

from __future__ import annotations

from typing import Any

import pytest
from orrery_plugin_example.tool import PROJECT_PULSE
from pydantic_ai import RunContext

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.deps import TurnDeps
from orrery.testing import check_tool_conformance, run_tool_conformance


async def _states_unquoted(ctx: RunContext[TurnDeps], detail: str = "tasks") -> str:
    from orrery.repo.summary import project_summary

    assert ctx.deps.project_id is not None
    async with ctx.deps.db.sessions() as session:
        summary = await project_summary(session, ctx.deps.user_id, ctx.deps.project_id)
    return ", ".join(f"{n} {state}" for state, n in summary.task_states.items())


async def test_the_example_plugin_tool_quotes_what_it_shows(db: Database, settings: Settings) -> None:
    for detail in ("tasks", "all"):
        await check_tool_conformance(db, settings, PROJECT_PULSE, {"detail": detail})


async def test_a_tool_that_shows_a_state_unquoted_fails(db: Database, settings: Settings) -> None:
    report = await run_tool_conformance(db, settings, _states_unquoted)
    assert report.failures and "# H-X" in report.result
    with pytest.raises(AssertionError, match="unquoted"):
        await check_tool_conformance(db, settings, _states_unquoted)


def test_kit_exports(request: Any) -> None:
    import orrery.testing as kit

    assert {"check_tool_conformance", "run_tool_conformance", "ToolConformanceReport"} <= set(kit.__all__)
