"""The example plugin end to end, written with the shipped testing kit (its fixtures and models):
a chat turn picks the plugin's agent, calls its tool and scopes with its strategy, through the
orchestrator, the HTTP API, the OpenAI-compatible door and MCP."""

from __future__ import annotations

from typing import Any

import pytest

from orrery.testing import KitUser, ScriptedModel, TestOrchestrator, assert_within_budget, on

RETRO_SCRIPT = on(
    "retro",
    call=("project_pulse", {"detail": "tasks"}),
    say="Before we start, where the tasks stand: {tool_result}",
)


@pytest.fixture
def orrery_model() -> ScriptedModel:
    return ScriptedModel(RETRO_SCRIPT, otherwise="Noted.")


async def test_a_turn_picks_the_plugin_agent_calls_its_tool_and_scopes_with_its_strategy(
    orrery_orchestrator: TestOrchestrator, orrery_user: KitUser, orrery_model: ScriptedModel
) -> None:
    chat, user, project = orrery_orchestrator.chat, orrery_user.id, orrery_user.project_id
    # a first message about a retro: the router picks the plugin's agent by its routing words
    fresh = await orrery_orchestrator.start_session(user, project)
    routed = await chat(user, fresh, "Time for our retrospective: run a retro")
    assert routed.agent == "retro"
    assert [c["name"] for c in routed.tool_calls] == ["project_pulse"]
    assert "Tasks in Test project: no tasks." in routed.reply
    assert routed.receipt.strategy == "decisions_first"
    assert "project_pulse" in orrery_model.last.tools
    handoff = orrery_model.last.tool_schemas["handoff_to_agent"]["properties"]["agent"]["description"]
    assert "retro" in handoff and "coach" in handoff  # the model can hand off to the plugin's agent
    assert "facilitate a short retrospective" in (orrery_model.last.instructions or "")
    assert "Retrospectives (start, stop, continue)" in (orrery_model.last.instructions or "")

    # a longer conversation: the plugin's strategy keeps the old decision and drops old small talk
    session = await orrery_orchestrator.start_session(user, project)
    await chat(user, session, "We decided to ship on Friday.", agent="coach")
    for n in range(6):
        await chat(user, session, f"Small talk number {n} about lunch.")
    handed = await chat(user, session, "Start the retro now", agent="retro")
    assert handed.agent == "retro"
    conversation = next(s for s in handed.receipt.sections if s.name == "conversation")
    kept = {item.key: item.reason for item in conversation.included}
    assert kept["seq 1"] == "records a decision"
    assert any(item.reason == "older and records no decision" for item in conversation.excluded)
    assert "We decided to ship on Friday." in orrery_model.last.history_texts
    assert "Small talk number 0 about lunch." not in orrery_model.last.history_texts
    assert_within_budget(handed.receipt)


async def test_the_plugin_through_http_openai_and_the_tool_door(
    orrery_client: Any, orrery_user: KitUser
) -> None:
    agents = {a["id"]: a for a in (await orrery_client.get("/v1/agents")).json()}
    assert agents["retro"]["plugin"] == "orrery-plugin-example"
    assert agents["retro"]["model"] == "orrery/retro" and "project_pulse" in agents["retro"]["tools"]
    assert agents["coach"]["plugin"] is None
    strategies = {s["name"]: s for s in (await orrery_client.get("/v1/strategies")).json()}
    assert strategies["decisions_first"]["plugin"] == "orrery-plugin-example"
    assert strategies["last_n"]["plugin"] is None
    tools = {t["name"]: t for t in (await orrery_client.get("/v1/tools")).json()}
    assert tools["project_pulse"]["read_only"] is True
    assert tools["project_pulse"]["parameters"]["properties"]["detail"]["description"]

    models = {m["id"] for m in (await orrery_client.get("/v1/models")).json()["data"]}
    assert "orrery/retro" in models
    completion = await orrery_client.post(
        "/v1/chat/completions",
        json={
            "model": "orrery/retro",
            "user": "dev",
            "messages": [{"role": "user", "content": "retro time"}],
        },
        headers={"Accept": "application/json"},
    )
    assert completion.status_code == 200, completion.text
    assert "where the tasks stand" in completion.json()["choices"][0]["message"]["content"]

    pulse = await orrery_client.post(
        "/v1/tools/project_pulse",
        json={"arguments": {"detail": "all"}, "project_id": str(orrery_user.project_id)},
    )
    assert pulse.status_code == 200 and pulse.json()["result"].startswith("Tasks in Test project")
    typo = await orrery_client.post("/v1/tools/project_pulse", json={"arguments": {"detial": "all"}})
    assert typo.status_code == 422 and "unknown argument(s) detial" in typo.json()["error"]["message"]
    missing = await orrery_client.post("/v1/tools/nope", json={})
    assert missing.status_code == 404
    foreign = await orrery_client.post(
        "/v1/tools/project_pulse", json={"project_id": "00000000-0000-4000-8000-000000000000"}
    )
    assert foreign.status_code == 404


async def test_mcp_serves_the_plugin_tool(orrery_db: Any, orrery_settings: Any, orrery_user: KitUser) -> None:
    from orrery.deps import TurnDeps
    from orrery.mcp_server import build_server

    async def caller() -> TurnDeps:
        return TurnDeps(orrery_db, orrery_user.id, orrery_settings, orrery_user.project_id)

    server = build_server(caller, orrery_settings)
    listed = {t.name: t for t in await server.list_tools()}
    assert listed["project_pulse"].annotations.read_only_hint is True
    result = await server.call_tool("project_pulse", {"detail": "tasks"})
    assert "Tasks in Test project" in result.content[0].text
