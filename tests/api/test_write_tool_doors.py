"""Every writing tool works through every door (HTTP `/v1/tools/*`, MCP, the CLI, an agent) on both
databases WHILE a chat turn runs. Before, the HTTP door opened the tool's write transaction inside
the request's own: on SQLite it waited 5 s for its own lock and answered 503. The CLI door runs the
`orrery` console script in its own process, forked from a launcher that has done its third-party
imports (`tests/support/entrypoint.py`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from mcp import Client
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.demo.workspace import DEMO_DOCS
from orrery.deps import TurnDeps
from orrery.mcp_server import build_server
from orrery.tools.registry import agent_tools
from tests.conftest import settings_for
from tests.support.entrypoint import server_launcher
from tests.support.models import calls
from tests.support.serving import serving

BOUND_SECONDS = 120  # a bound on waiting for the held turn to start, not a timing assertion
DOORS = ("http", "mcp", "cli", "agent")


@pytest.fixture
def settings(db_url: str) -> Settings:
    return settings_for(db_url, docs_dir=str(DEMO_DOCS))


def _arguments(tool: str, door: str) -> dict[str, Any]:
    if tool == "update_entry":
        return {"code": "BR-012", "correction": f"Overage is billed monthly (via {door})."}
    if tool == "create_entry":
        return {
            "collection": "glossary",
            "name": f"Overage window via {door}",
            "description": "The days after a billing period in which overage is counted.",
            "links": ["BR-012"],
        }
    return {"force": True}


async def _through(door: str, tool: str, http: httpx.AsyncClient, deps: TurnDeps, url: str) -> str:
    """Run `tool` through `door` as the demo user; the tool's answer (an error raises)."""
    arguments = _arguments(tool, door)
    if door == "http":
        answer = await http.post(
            f"/v1/tools/{tool}", json={"arguments": arguments, "project_id": str(deps.project_id)}
        )
        assert answer.status_code == 200, (tool, answer.status_code, answer.text)
        return str(answer.json()["result"])
    if door == "mcp":

        async def resolve() -> TurnDeps:
            return deps

        async with Client(build_server(resolve, deps.settings)) as client:
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result
        return str(result.content[0].text)  # type: ignore[union-attr]
    if door == "cli":
        env = {
            "DATABASE_URL": url,
            "ORRERY_SECRET_KEY": "test-secret",
            "ORRERY_DOCS_DIR": str(DEMO_DOCS),
        }
        command = ["tool", tool, "--args", json.dumps(arguments), "--project", str(deps.project_id)]
        code, stdout, stderr = await asyncio.to_thread(server_launcher().run_split, command, None, env)
        assert code == 0, stderr
        return stdout
    agent = Agent(calls(tool, arguments), deps_type=TurnDeps, tools=agent_tools([tool]))
    return str((await agent.run("go", deps=deps)).output)


async def _held_turn(app: Any, http: httpx.AsyncClient, sid: str) -> tuple[asyncio.Event, asyncio.Task[Any]]:
    """A chat turn that stays inside its model call until the returned event is set."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def held(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        entered.set()
        await release.wait()
        yield "answered after the tools ran"

    app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=held)
    turn = asyncio.create_task(
        http.post(
            f"/v1/sessions/{sid}/messages",
            json={"content": "Keep going"},
            headers={"Accept": "application/json"},
            timeout=BOUND_SECONDS,
        )
    )
    await asyncio.wait_for(entered.wait(), BOUND_SECONDS)
    return release, turn


async def test_each_write_tool_through_every_door_while_a_turn_runs(
    settings: Settings, demo: Any, db_url: str
) -> None:
    app = create_app(settings)
    async with serving(app, demo.api_key) as http:
        sid = (await http.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
        release, turn = await _held_turn(app, http, sid)
        deps = TurnDeps(db=app.state.db, user_id=demo.user_id, settings=settings, project_id=demo.project_id)
        try:
            for door in DOORS:
                updated = await _through(door, "update_entry", http, deps, db_url)
                assert "BR-012" in updated, (door, updated)
                indexed = await _through(door, "index_docs", http, deps, db_url)
                assert '"success": true' in indexed, (door, indexed)
        finally:
            release.set()
        answered = await turn
        assert answered.status_code == 200, answered.text
        assert answered.json()["reply"] == "answered after the tools ran"
        entry = (await http.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-012")).json()
        noted = [c["text"] for c in entry["data"]["corrections"]]
        assert [n for n in noted if "(via " in n] == [
            f"Overage is billed monthly (via {door})." for door in DOORS
        ]


async def test_create_entry_through_every_door(settings: Settings, demo: Any, db_url: str) -> None:
    """Issue 52 §2: capture through HTTP, MCP, the CLI and an agent; each new entry is linked."""
    app = create_app(settings)
    async with serving(app, demo.api_key) as http:
        deps = TurnDeps(db=app.state.db, user_id=demo.user_id, settings=settings, project_id=demo.project_id)
        codes = []
        for door in DOORS:
            created = await _through(door, "create_entry", http, deps, db_url)
            assert "Created." in created and f"Overage window via {door}" in created, (door, created)
            codes.append(created.split("## ", 1)[1].split(":", 1)[0])
        assert len(set(codes)) == len(DOORS) and all(c.startswith("GT-") for c in codes)
        entry = (await http.get(f"/v1/projects/{demo.project_id}/kb/entries/BR-012")).json()
        assert set(codes) <= {r["code"] for r in entry["related"]}


async def test_the_cli_tool_door_explains_bad_input(settings: Settings, demo: Any, db_url: str) -> None:
    env = {"DATABASE_URL": db_url, "ORRERY_SECRET_KEY": "test-secret"}
    for args, message in [
        (["nope"], "tool 'nope' not found"),
        (["update_entry", "--args", "[1]"], "must be a JSON object"),
        (["update_entry", "--args", "{"], "is not JSON"),
        (["update_entry", "--args", '{"code": "BR-012"}'], "nothing to update"),
    ]:
        code, _, stderr = await asyncio.to_thread(server_launcher().run_split, ["tool", *args], None, env)
        assert code == 1 and message in " ".join(stderr.split()), (args, stderr)
