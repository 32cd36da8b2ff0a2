"""The testing kit itself: the conformance suite on every strategy (and on broken ones), the
scripted model's recording, receipt assertions, and throwaway databases on PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from orrery.memory.scoping import ScopingContext, ScopingResult, strategy_names
from orrery.memory.scoping.base import group_units, to_scoped
from orrery.plugins import ensure_plugins
from orrery.testing import (
    KitUser,
    ScriptedModel,
    TestOrchestrator,
    assert_excluded,
    assert_included,
    assert_message_dropped,
    assert_message_kept,
    assert_within_budget,
    check_strategy_conformance,
    on,
    run_strategy_conformance,
)

ensure_plugins()  # plugin strategies (the example's `decisions_first`) join the built-ins below
KNOWN_BROKEN: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[n]))
        if n in KNOWN_BROKEN
        else n
        for n in strategy_names()
        if not n.startswith("test_")  # strategies other test modules register for themselves
    ],
)
async def test_every_registered_strategy_keeps_the_scoping_contract(name: str) -> None:
    report = await run_strategy_conformance(name)
    assert report.runs > 100 and not report.failures


class Greedy:
    """Ignores the budget and sends everything newest first, with the query as a reminder."""

    name: ClassVar[str] = "greedy"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(ctx.settings.history_scan_limit)
        units, _ = group_units(window)
        messages = list(reversed(to_scoped(units)))
        messages.append({"role": "system", "content": f"Remember: {ctx.query}"})
        return ScopingResult(messages, strategy=self.name)


class DropsToolCalls:
    """Keeps tool results but never the messages that called them."""

    name: ClassVar[str] = "drops_calls"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        window = await ctx.history.recent(4)
        return ScopingResult([{"role": m.role, "content": m.content} for m in window if m.role == "tool"])


async def test_the_suite_catches_broken_strategies() -> None:
    greedy = await check_strategy_conformance(Greedy)
    problems = " | ".join(greedy.failures)
    assert "over a budget of 0" in problems
    assert "out of chronological order" in problems
    assert "query leaked" in problems
    dropping = await check_strategy_conformance(DropsToolCalls)
    assert any("sent without its call" in f for f in dropping.failures)
    with pytest.raises(AssertionError, match="strategy 'greedy' broke the scoping contract"):
        await run_strategy_conformance(Greedy)


async def test_scripted_model_records_what_it_was_shown(
    orrery_orchestrator: TestOrchestrator, orrery_demo: Any
) -> None:
    model = ScriptedModel(
        on(
            "blocked",
            call=(
                "get_linked_entities",
                {"entity_id": str(orrery_demo.focus["task"]), "entity_kind": "task"},
            ),
            say="Linked: {tool_result}",
        ),
        otherwise="Hello from the script.",
    )
    orrery_orchestrator.model = model
    session = await orrery_orchestrator.start_session(
        orrery_demo.user_id,
        orrery_demo.project_id,
        focus=("task", orrery_demo.focus["task"]),
        agent="planner",
    )
    hello = await orrery_orchestrator.chat(orrery_demo.user_id, session, "Hi there")
    assert hello.reply == "Hello from the script." and hello.tool_calls == []
    turn = await orrery_orchestrator.chat(orrery_demo.user_id, session, "What is this task blocked by?")
    assert [c["name"] for c in turn.tool_calls] == ["get_linked_entities"]
    assert turn.reply.startswith("Linked:") and "Launch marketing" in turn.reply
    assert model.tools_called == ["get_linked_entities"]
    seen = model.last
    assert seen.user_text == "What is this task blocked by?"
    assert "Finalize pricing page" in (seen.instructions or "")  # the focus section reached the model
    assert {"get_linked_entities", "build_context", "handoff_to_agent"} <= set(seen.tools)
    assert seen.tool_schemas["get_linked_entities"]["properties"]["entity_id"]["description"]
    assert "Hi there" in seen.history_texts and "Hello from the script." in seen.history_texts

    receipt = turn.receipt
    assert_within_budget(receipt)
    assert_included(receipt, "focus", f"task:{orrery_demo.focus['task']}")
    assert_included(receipt, "expertise", "planning-dependencies")
    assert_included(receipt, "related", "group:plans")
    assert_message_kept(receipt, 1)
    with pytest.raises(AssertionError, match="was not dropped"):
        assert_message_dropped(receipt, 1)
    with pytest.raises(AssertionError, match="no section 'nope'"):
        assert_included(receipt, "nope", "x")


async def test_receipt_assertions_name_what_was_dropped(
    orrery_orchestrator: TestOrchestrator, orrery_user: KitUser
) -> None:
    from orrery.context.working_context import assemble_working_context

    session = await orrery_orchestrator.start_session(orrery_user)  # the fixture's user and project
    for n in range(14):
        await orrery_orchestrator.chat(
            orrery_user.id, session, f"Message {n}: " + "words " * 40, agent="coach"
        )
    async with orrery_orchestrator.db.sessions() as s:
        wc = await assemble_working_context(
            s,
            agent="coach",
            base_prompt="Coach.",
            session_id=session,
            user_id=orrery_user.id,
            settings=orrery_orchestrator.settings.model_copy(update={"budget_conversation": 300}),
            scoping="token_budget",
            query="next",
        )
    assert_message_dropped(wc.receipt, 1, "budget")
    assert_excluded(wc.receipt, "conversation", "seq", "budget")
    assert_message_kept(wc.receipt.as_dict(), 28)


async def test_throwaway_databases_on_postgresql(pg_server: Any, tmp_path: Path) -> None:
    from orrery.config import Settings
    from orrery.db.engine import Database
    from orrery.db.migrations import ensure_current
    from orrery.testing.database import drop_template, migrated_template, throwaway_database

    server = pg_server.url("postgres")
    template = await migrated_template(server, tmp_path)
    try:
        async with throwaway_database(server, directory=tmp_path, template=template) as url:
            assert url.startswith("postgresql+asyncpg://") and "orrery_t_" in url
            db = Database.from_settings(
                Settings(_env_file=None, database_url=url, env="test", secret_key="s")  # type: ignore[call-arg]
            )
            try:
                await ensure_current(db.engine)
            finally:
                await db.dispose()
    finally:
        await drop_template(server, template)
