"""Seed 004 through the doors where the audit found it wrong: models named in a story's body are
linked (index and story tool), `get_relevant_specs` returns snippets verbatim in fences with
identifiers as asked (tool), the missing-index fallback reads as written (tool), the index route
says `success` (HTTP), and the seed's `chunk_docs` is served at the tools door and over MCP while
agents see one tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai import Agent

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.demo.workspace import DEMO_DOCS
from orrery.deps import TurnDeps
from orrery.docs import index
from orrery.tools.registry import agent_tools, tool_names
from tests.support.factories import make_project, make_user
from tests.support.models import calls
from tests.support.serving import serving

PRD = """# Ledger - Product Requirements

## Epic: Accounts

### US-001: User signs in
**Priority:** P0

As a user, I want to sign in so that my work is private. The login is stored in the `Session`
table and expires after a day.

**Acceptance Criteria:**
- A wrong password shows a clear error

### US-002: Accountant reviews an invoice
**Priority:** P0

As an accountant, I want to review each `Invoice` and LineItem before it is sent.

**Acceptance Criteria:**
- Totals add up
"""
SCHEMA = """model Session {
  id        String   @id
  expiresAt DateTime
}

model Invoice {
  id    String @id
  lines LineItem[]
}

model LineItem {
  id     String @id
  amount Int
}

model Sessionless {
  id String @id
}
"""


async def _project(db: Database, tmp_path: Path, prd: str = PRD) -> dict[str, Any]:
    docs = tmp_path / "ledger"
    (docs / "specs").mkdir(parents=True)
    (docs / "PRD.md").write_text(prd)
    (docs / "specs" / "schema.prisma").write_text(SCHEMA)
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        await index.index_docs(s, user.id, project.id, docs)
    return {"user": user.id, "project": project.id}


async def _run(db: Database, settings: Settings, w: dict[str, Any], tool: str, args: dict[str, Any]) -> str:
    deps = TurnDeps(db=db, user_id=w["user"], settings=settings, project_id=w["project"])
    agent = Agent(calls(tool, args), deps_type=TurnDeps, tools=agent_tools())
    return str((await agent.run("go", deps=deps)).output)


async def test_models_named_in_a_story_body_are_linked(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    w = await _project(db, tmp_path)
    async with db.sessions() as s:
        signin = await index.get_context_for_story(s, w["user"], w["project"], "US-001")
        review = await index.get_context_for_story(s, w["user"], w["project"], "US-002")
    assert [m["model_name"] for m in signin["db_models"]] == ["Session"]  # not Sessionless
    assert {m["model_name"] for m in review["db_models"]} == {"Invoice", "LineItem"}
    text = await _run(db, settings, w, "get_context_for_story", {"story_id": "US-001"})
    assert "## Model Session" in text and "model Session {" in text


async def test_relevant_specs_tool_quotes_snippets_verbatim_and_identifiers_as_asked(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
    w = {"user": user.id, "project": project.id}
    missing = await _run(db, settings, w, "get_relevant_specs", {"spec_type": "api", "identifiers": ["/x"]})
    assert "Run `orrery docs index` (or the index_docs tool) first." in missing and "\\`" not in missing
    async with db.transaction() as s:
        await index.index_docs(s, user.id, project.id, DEMO_DOCS)
    api = await _run(
        db,
        settings,
        w,
        "get_relevant_specs",
        {"spec_type": "api", "identifiers": ["inviteMember", "GET /Nope"]},
    )
    assert "```yaml\n" in api and "tags: [" in api and "\\[" not in api and "\\#" not in api
    assert "$ref: '#/components" in api or '$ref: "#/components' in api
    assert api.rstrip().endswith("Not found: GET /Nope")
    models = await _run(
        db, settings, w, "get_relevant_specs", {"spec_type": "database", "identifiers": ["Workspace"]}
    )
    assert "## Model Workspace" in models and "  name      String   @unique" in models


async def test_chunk_docs_at_the_tools_door_and_over_mcp_and_success_on_the_index_route(
    db: Database, settings: Settings, demo: Any
) -> None:
    assert "chunk_docs" not in tool_names() and "index_docs" in tool_names()  # agents see one tool
    configured = settings.model_copy(update={"docs_dir": DEMO_DOCS})
    async with db.transaction() as s:
        from orrery.db.models import User

        owner = await s.get(User, demo.user_id)
        assert owner is not None
        fresh = (await make_project(s, owner, "Fresh")).id
    async with serving(create_app(configured), demo.api_key) as api:
        listed = [t["name"] for t in (await api.get("/v1/tools")).json()]
        assert "index_docs" in listed and "chunk_docs" not in listed
        made = await api.post(
            "/v1/tools/chunk_docs", json={"project_id": str(fresh), "arguments": {"force_rebuild": True}}
        )
        assert made.status_code == 200, made.text
        assert json.loads(made.json()["result"])["success"] is True
        routed = await api.post(f"/v1/projects/{fresh}/docs/index", json={"force": True})
        assert routed.status_code == 200 and routed.json()["success"] is True
        assert list(routed.json())[0] == "success" and routed.json()["stories"] == 8
        unknown = await api.post("/v1/tools/chunk_docs", json={"arguments": {"project_path": "/etc"}})
        assert unknown.status_code == 422 and "project_path" in unknown.text
    await _mcp_chunk_docs(db, configured, demo, fresh)


async def _mcp_chunk_docs(db: Database, settings: Settings, demo: Any, project: Any) -> None:
    from orrery.mcp_server import build_server

    deps = TurnDeps(db=db, user_id=demo.user_id, settings=settings, project_id=project)

    async def resolve() -> TurnDeps:
        return deps

    server = build_server(resolve, settings)
    names = [t.name for t in await server.list_tools()]
    assert "index_docs" in names and "chunk_docs" not in names
    result: Any = await server.call_tool("chunk_docs", {"force_rebuild": False})
    text = "".join(getattr(b, "text", "") for b in result.content)
    assert '"success": true' in text and '"skipped_unchanged": true' in text
