"""The document index in the database: indexing, re-indexing, story context, specs, search, tools."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.demo.workspace import DEMO_DOCS
from orrery.deps import TurnDeps
from orrery.docs import index
from orrery.docs.chunker import CHUNKER_VERSION
from orrery.errors import NotFoundError
from orrery.tokens import counter_for
from orrery.tools.registry import agent_tools
from tests.support.factories import make_project, make_user
from tests.support.models import calls


@pytest.fixture
async def w(db: Database, tmp_path: Path) -> dict[str, Any]:
    docs = tmp_path / "docs"
    shutil.copytree(DEMO_DOCS, docs)
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
    return {"user": user.id, "project": project.id, "docs": docs}


async def _index(db: Database, w: dict[str, Any], **kw: Any) -> index.IndexResult:
    async with db.transaction() as s:
        return await index.index_docs(s, w["user"], w["project"], w["docs"], **kw)


async def test_missing_index_says_what_to_run(db: Database, w: dict[str, Any]) -> None:
    async with db.sessions() as s:
        with pytest.raises(NotFoundError, match=r"Document index not found. Run `orrery docs index`"):
            await index.get_context_for_story(s, w["user"], w["project"], "US-001")
        with pytest.raises(NotFoundError, match="Document index not found"):
            await index.get_context_summary(s, w["user"], w["project"])


async def test_index_then_story_context(db: Database, w: dict[str, Any]) -> None:
    result = await _index(db, w)
    assert (result.chunks_created, result.stories, result.api_endpoints_mapped) == (25, 8, 8)
    assert result.epics_indexed == ["Billing", "Migration", "Workspaces"] and not result.skipped_unchanged
    async with db.sessions() as s:
        ctx = await index.get_context_for_story(s, w["user"], w["project"], "us-004")
        summary = await index.get_context_summary(s, w["user"], w["project"])
    assert ctx["story"]["id"] == "US-004" and len(ctx["story"]["acceptance_criteria"]) == 4
    assert [a["endpoint"] for a in ctx["api_specs"]] == ["/pricing/estimate"]
    assert (
        "openapi_snippet" in ctx["api_specs"][0] and "estimatePrice" in ctx["api_specs"][0]["openapi_snippet"]
    )
    assert [sc["schema_name"] for sc in ctx["zod_schemas"]] == ["PriceEstimateRequestSchema"]
    assert {r["id"] for r in ctx["related_stories"]} >= {"US-005", "US-006"}  # same epic
    assert (
        summary["total_stories"] == 8
        and summary["api_endpoint_count"] == 8
        and summary["db_model_count"] == 6
    )


async def test_story_context_is_a_fraction_of_the_whole_docs(db: Database, w: dict[str, Any]) -> None:
    import json

    await _index(db, w)
    counter = counter_for("gpt-4o")
    whole = sum(counter.count(p.read_text()) for p in w["docs"].rglob("*") if p.is_file())
    async with db.sessions() as s:
        ctx = await index.get_context_for_story(s, w["user"], w["project"], "US-004")
    assert counter.count(json.dumps(ctx)) < whole / 2


async def test_reindex_skips_unchanged_and_replaces_stale_chunks(db: Database, w: dict[str, Any]) -> None:
    await _index(db, w)
    assert (await _index(db, w)).skipped_unchanged
    assert not (await _index(db, w, force=True)).skipped_unchanged
    prd = w["docs"] / "PRD.md"
    prd.write_text(prd.read_text().split("### US-008")[0])
    result = await _index(db, w)
    assert result.stories == 7 and not result.skipped_unchanged
    async with db.sessions() as s:
        with pytest.raises(NotFoundError):
            await index.get_context_for_story(s, w["user"], w["project"], "US-008")
        again = await index.index_docs(s, w["user"], w["project"])  # the stored root
    assert again.skipped_unchanged


async def test_specs_search_and_epics(db: Database, w: dict[str, Any]) -> None:
    await _index(db, w)
    async with db.sessions() as s:
        specs = await index.get_relevant_specs(
            s, w["user"], w["project"], "api", ["/pricing/estimate", "inviteMember", "GET /nope"]
        )
        models = await index.get_relevant_specs(
            s, w["user"], w["project"], "database", ["Workspace", "invoice"]
        )
        found = await index.search_context(s, w["user"], w["project"], ["overage", "invoice"], limit=3)
        stories = await index.search_context(s, w["user"], w["project"], ["invitation"], scope="stories")
        epic = await index.list_stories_by_epic(s, w["user"], w["project"], "billing")
        with pytest.raises(NotFoundError) as unknown:
            await index.list_stories_by_epic(s, w["user"], w["project"], "Marketing")
    assert str(unknown.value) == "epic 'Marketing' not found; epics: Billing, Migration, Workspaces"
    assert {x["operationId"] for x in specs["specs"]} == {"estimatePrice", "inviteMember"}
    assert specs["not_found"] == ["GET /nope"]  # as asked
    assert {m["model_name"] for m in models["specs"]} == {"Workspace", "Invoice"}
    assert found["matches"][0]["id"] == "US-005" and found["matches"][0]["matched_keywords"] == [
        "overage",
        "invoice",
    ]
    assert all(m["type"] == "user_story" for m in stories["matches"])
    assert [x["id"] for x in epic["stories"]] == ["US-004", "US-005", "US-006"]
    assert epic["stories"][0]["acceptance_criteria_count"] == 4


async def test_index_is_scoped_to_members(db: Database, w: dict[str, Any]) -> None:
    await _index(db, w)
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
    async with db.sessions() as s:
        with pytest.raises(NotFoundError):
            await index.get_context_for_story(s, eve.id, w["project"], "US-001")
        with pytest.raises(NotFoundError):
            await index.index_docs(s, eve.id, w["project"], w["docs"])


async def test_doc_tools(db: Database, settings: Settings, w: dict[str, Any]) -> None:
    deps = TurnDeps(db=db, user_id=w["user"], settings=settings, project_id=w["project"])

    async def run(tool: str, args: dict[str, Any]) -> str:
        return str(
            (
                await Agent(calls(tool, args), deps_type=TurnDeps, tools=agent_tools()).run("go", deps=deps)
            ).output
        )

    assert "Document index not found" in await run("get_context_summary", {})
    assert "Set ORRERY_DOCS_DIR" in await run("index_docs", {})
    await _index(db, w)
    assert '"total_stories": 8' in await run("get_context_summary", {})
    assert "# Story US-002" in await run("get_context_for_story", {"story_id": "US-002"})
    assert "InviteMemberRequestSchema" in await run(
        "get_relevant_specs", {"spec_type": "schema", "identifiers": ["InviteMemberRequestSchema"]}
    )
    assert '"total_matches"' in await run("search_context", {"keywords": ["migration"]})
    assert '"epic": "Migration"' in await run("list_stories_by_epic", {"epic": "migration"})
    assert '"skipped_unchanged": true' in await run("index_docs", {})
    assert "story 'US-999' not found" in await run("get_context_for_story", {"story_id": "US-999"})


async def test_summary_has_the_seed_keys_and_the_index_version(db: Database, w: dict[str, Any]) -> None:
    """Seed 004's `get_context_summary` keys, `index_version` included (the chunker that built it)."""
    await _index(db, w)
    async with db.sessions() as s:
        summary = await index.get_context_summary(s, w["user"], w["project"])
    seed_keys = {"project_id", "total_stories", "epics", "api_endpoint_count", "db_model_count"}
    assert seed_keys | {"last_chunked", "index_version"} <= set(summary)
    assert summary["index_version"] == CHUNKER_VERSION and summary["total_stories"] == 8
