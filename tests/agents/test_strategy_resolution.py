"""One strategy rule for every path: chat turns, the context endpoint and agent-definition options."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery import roster as definitions
from orrery.agents.orchestrator import Orchestrator
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.context.strategy import resolve_strategy
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.demo.workspace import load_demo
from orrery.errors import ValidationError
from orrery.memory.messages import append_message
from orrery.repo import chat
from orrery.roster import get_agent
from tests.conftest import settings_for


def _settings(**kw: Any) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]


def test_precedence_explicit_session_agent_setting_global_setting_agent_default() -> None:
    planner = get_agent("planner")
    everything = _settings(agent_strategies={"planner": "summary"}, scoping_strategy="relevance")
    explicit = resolve_strategy(planner, everything, session_strategy="token_budget", explicit="last_n")
    assert explicit.source == "explicit"
    choice = resolve_strategy(planner, everything, session_strategy="token_budget")
    assert (choice.name, choice.source) == ("token_budget", "session")
    assert resolve_strategy(planner, everything).name == "summary"
    assert resolve_strategy(get_agent("coach"), everything).name == "relevance"  # the global setting
    plain = resolve_strategy(planner, _settings())
    assert (plain.name, plain.source) == ("relevance", "agent default")
    assert plain.options == {"max_messages": 10}
    with pytest.raises(ValidationError, match="unknown scoping strategy"):
        resolve_strategy(planner, _settings(scoping_strategy="nope"))


async def _session(db: Database, settings: Settings) -> Any:
    demo = await load_demo(db, settings.secret_key)
    async with db.transaction() as s:
        c = await chat.create_session(s, demo.user_id, project_id=demo.project_id, active_agent="coach")
    return demo, c.id


@pytest.mark.demo_db
async def test_a_chat_turn_and_the_context_endpoint_follow_the_global_setting(db_url: str) -> None:
    settings = settings_for(db_url, scoping_strategy="relevance")
    db = Database.from_settings(settings)
    try:
        demo, sid = await _session(db, settings)
        events = [e async for e in Orchestrator(db, settings).turn(demo.user_id, sid, "Hello there")]
        context = next(e for e in events if e.type == "context")
        assert context.data["strategy"] == "relevance"
        app = create_app(settings)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://orrery",
                headers={"Authorization": f"Bearer {demo.api_key}"},
            ) as api,
        ):
            shown = (await api.get(f"/v1/sessions/{sid}/context")).json()
        assert shown["receipt"]["strategy"] == "relevance"
        assert shown["receipt"]["strategy_source"] == "global setting"
        assert shown["system_prompt"].startswith(get_agent("coach").prompt())
    finally:
        await db.dispose()


@pytest.mark.demo_db
async def test_context_endpoint_honours_per_agent_setting(db_url: str) -> None:
    settings = settings_for(db_url, agent_strategies={"coach": "token_budget"})
    db = Database.from_settings(settings)
    try:
        demo, sid = await _session(db, settings)
        app = create_app(settings)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://orrery",
                headers={"Authorization": f"Bearer {demo.api_key}"},
            ) as api,
        ):
            shown = (await api.get(f"/v1/sessions/{sid}/context")).json()
        assert (shown["receipt"]["strategy"], shown["receipt"]["strategy_source"]) == (
            "token_budget",
            "agent setting",
        )
    finally:
        await db.dispose()


@pytest.fixture
def coach_keeps_only_questions(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    coach = dataclasses.replace(
        definitions.AGENTS["coach"],
        strategy="last_n",  # the filter is a `last_n` option
        options={"filter": lambda m: m.content.endswith("?")},
    )
    monkeypatch.setitem(definitions.AGENTS, "coach", coach)
    yield None


@pytest.mark.demo_db
async def test_agent_definition_options_reach_the_strategy(
    db: Database, settings: Settings, coach_keeps_only_questions: None
) -> None:
    demo, sid = await _session(db, settings)
    async with db.transaction() as s:
        for text in ("I shipped the pricing page.", "What should I do next?"):
            await append_message(s, demo.user_id, sid, chat.NewMessage("user", text))
        wc = await assemble_working_context(
            s, agent="coach", session_id=sid, user_id=demo.user_id, settings=settings
        )
    assert [m["content"] for m in wc.messages] == ["What should I do next?"]
    conversation = next(r for r in wc.receipt.sections if r.name == "conversation")
    assert [i.reason for i in conversation.excluded] == ["removed by the relevance filter"]


def test_agents_that_plan_work_are_told_when_to_use_the_document_tools() -> None:
    planner = get_agent("planner").prompt()
    for tool in ("get_context_for_story", "search_context", "list_stories_by_epic", "index_docs"):
        assert f"`{tool}`" in planner
    assert "`get_context_for_story`" in get_agent("coach").prompt()
