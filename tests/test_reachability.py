"""What exists in Python reaches every door: build_context's filters, incremental mode and user
templates (agent tool, MCP, API), `filter_kind=all`, and a first document index from a configured
folder."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.demo.workspace import DEMO_DOCS, load_demo
from orrery.deps import TurnDeps
from orrery.mcp_server import build_server
from orrery.tools.registry import agent_tools
from tests.conftest import settings_for
from tests.support.factories import make_project
from tests.support.models import calls

MINE = "budget: 300\nstrategy: breadth\nformat: outline\ndescription: my own\n"


async def _client(settings: Settings, api_key: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://orrery",
            headers={"Authorization": f"Bearer {api_key}"},
        ) as client,
    ):
        yield client


async def _tool(db: Database, settings: Settings, demo: Any, name: str, args: dict[str, Any]) -> str:
    agent = Agent(calls(name, args), deps_type=TurnDeps, tools=agent_tools([name]))
    deps = TurnDeps(db=db, user_id=demo.user_id, settings=settings, project_id=demo.project_id)
    return str((await agent.run("go", deps=deps)).output).removeprefix("TOOL SAID: ")


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    (tmp_path / "mine.yaml").write_text(MINE)
    return tmp_path


@pytest.mark.demo_db
async def test_build_context_filters_incremental_and_user_templates_reach_the_tool(
    db_url: str, templates: Path
) -> None:
    settings = settings_for(db_url, templates_dir=templates)
    db = Database.from_settings(settings)
    try:
        demo = await load_demo(db, settings.secret_key)
        seed = str(demo.focus["task"])
        first = await _tool(db, settings, demo, "build_context", {"seeds": [seed], "budget": 300})
        more = await _tool(
            db,
            settings,
            demo,
            "build_context",
            {"seeds": [seed], "existing_context": first, "additional_budget": 300},
        )
        ids = re.compile(r"\[([0-9a-f-]{36})\]")
        assert set(ids.findall(more)) and not set(ids.findall(more)) & set(ids.findall(first))
        only_plans = await _tool(
            db,
            settings,
            demo,
            "build_context",
            {
                "seeds": [seed],
                "include": {"kinds": ["plan"], "knowledge": False},
                "exclude": {"states": ["done"]},
            },
        )
        assert "Launch marketing" in only_plans and "(task," not in only_plans.split("\n", 3)[-1]
        mine = await _tool(db, settings, demo, "build_context", {"seeds": [seed], "template": "mine"})
        assert "/300 tokens" in mine
        async for api in _client(settings, demo.api_key):
            built = (await api.post("/v1/context/build", json={"seeds": [seed], "template": "mine"})).json()
            assert (built["query"]["strategy"], built["query"]["budget"]) == ("breadth", 300)
            everything = await api.get(f"/v1/entities/{seed}/linked", params={"filter_kind": "all"})
            unfiltered = (await api.get(f"/v1/entities/{seed}/linked")).json()
            assert everything.status_code == 200 and everything.json()["counts"] == unfiltered["counts"]
    finally:
        await db.dispose()


async def test_mcp_build_context_takes_filters_and_incremental_arguments() -> None:
    async def nobody() -> TurnDeps:
        raise AssertionError("not called")

    settings = settings_for("sqlite+aiosqlite:///unused.db")
    tools = {t.name: t for t in await build_server(nobody, settings).list_tools()}
    schema = tools["build_context"].input_schema
    assert {"include", "exclude", "existing_context", "additional_budget"} <= set(schema["properties"])
    assert "configured docs folder" in (tools["index_docs"].description or "")


@pytest.mark.demo_db
async def test_index_docs_creates_the_first_index_from_the_configured_folder(db_url: str) -> None:
    configured = settings_for(db_url, docs_dir=DEMO_DOCS)
    db = Database.from_settings(configured)
    try:
        demo = await load_demo(db, configured.secret_key)
        async with db.transaction() as s:
            from orrery.db.models import User

            owner = await s.get(User, demo.user_id)
            assert owner is not None
            fresh = await make_project(s, owner, "Fresh")
        async for api in _client(settings_for(db_url), demo.api_key):
            refused = await api.post(f"/v1/projects/{fresh.id}/docs/index", json={})
            assert refused.status_code == 422 and "ORRERY_DOCS_DIR" in refused.json()["error"]["message"]
        async for api in _client(configured, demo.api_key):
            made = await api.post(f"/v1/projects/{fresh.id}/docs/index", json={})
            assert made.status_code == 200 and made.json()["stories"] == 8
        other = TurnDeps(db=db, user_id=demo.user_id, settings=configured, project_id=fresh.id)
        agent = Agent(
            calls("index_docs", {"force": True}), deps_type=TurnDeps, tools=agent_tools(["index_docs"])
        )
        assert '"stories": 8' in str((await agent.run("go", deps=other)).output)
    finally:
        await db.dispose()
