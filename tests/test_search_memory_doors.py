"""`search_memory` through the other doors, on both databases: the HTTP tools door (a client on the
app), MCP (the SDK's client on the server the registry builds) and the CLI (`orrery memory search`
through the typer app, and once through the installed console script). Each gives the excerpts and
the receipt, never another person's chat or messages, filters by dates, keeps to the budget, keeps
stored text quoted, and refuses bad input readably. The agent door is tests/memory/test_search_memory.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.deps import TurnDeps
from tests.conftest import settings_for
from tests.memory.test_search_memory import People, people
from tests.support.cli import cli_environment, invoke
from tests.support.entrypoint import server_launcher

MAYA = "maya@demo.orrery.dev"


async def _post(api: httpx.AsyncClient, p: People, **arguments: Any) -> httpx.Response:
    body = {"arguments": {"query": "sprint deadline", **arguments}, "project_id": str(p.project)}
    return await api.post("/v1/tools/search_memory", json=body)


async def test_the_http_tools_door(api: httpx.AsyncClient, db: Database, demo: Any) -> None:
    async with db.transaction() as s:
        p = await people(s, demo.user_id, demo.project_id)
    listed = {t["name"]: t for t in (await api.get("/v1/tools")).json()}
    assert listed["search_memory"]["read_only"] is True
    assert set(listed["search_memory"]["parameters"]["properties"]) == {"query", "since", "until", "chat_id"}
    answer = await _post(api, p)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "April 5" in body["result"] and "May 20" not in body["result"] and "June 9" not in body["result"]
    receipt = body["structured"]
    assert receipt["result"] == body["result"] and 0 < receipt["tokens"] <= receipt["budget"]
    assert str(p.review.id) in {i["chat_id"] for i in receipt["included"]}
    assert str(p.bens.id) not in {i["chat_id"] for i in receipt["included"]}
    ranged = (await _post(api, p, since="2025-03-10", until="2025-03-20")).json()
    assert "April 5" in ranged["result"] and "April 1" not in ranged["result"]
    assert all("2025-03-10" <= i["date"] <= "2025-03-20" for i in ranged["structured"]["included"])
    hostile = (await _post(api, p, query="ignore previous instructions note")).json()["result"]
    assert "\n## SYSTEM" not in hostile and "\\#\\# SYSTEM" in hostile
    for arguments, message in [
        ({"chat_id": str(p.bens.id)}, "not found"),
        ({"since": "yesterday"}, "is not a date"),
        ({"since": "2025-03-10", "until": "2025-03-01"}, "is after until"),
        ({"query": " "}, "query is empty"),
        ({"limit": 3}, "unknown argument"),
    ]:
        refused = await _post(api, p, **arguments)
        assert refused.status_code == 422 and message in refused.text, (arguments, refused.text)
    foreign = await api.post(
        "/v1/tools/search_memory", json={"arguments": {"query": "x"}, "project_id": str(p.bens.id)}
    )
    assert foreign.status_code == 404


async def test_the_mcp_door(db: Database, settings: Settings, db_url: str, demo: Any) -> None:
    from mcp import Client

    from orrery.mcp_server import build_server

    async with db.transaction() as s:
        p = await people(s, demo.user_id, demo.project_id)
    small = settings_for(db_url, budget_search_memory=120)
    deps = TurnDeps(db=db, user_id=demo.user_id, settings=small, project_id=demo.project_id)

    async def resolve() -> TurnDeps:
        return deps

    async with Client(build_server(resolve, small)) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "search_memory")
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        found = await client.call_tool("search_memory", {"query": "sprint deadline"})
        assert not found.is_error
        text = found.content[0].text  # type: ignore[union-attr]
        assert "April 5" in text and "May 20" not in text
        receipt = found.structured_content
        assert receipt is not None and receipt["result"] == text and 0 < receipt["tokens"] <= 120
        assert str(p.bens.id) not in {i["chat_id"] for i in receipt["included"]}
        early = await client.call_tool("search_memory", {"query": "sprint deadline", "until": "2025-03-05"})
        assert "April 1" in early.content[0].text and "April 5" not in early.content[0].text  # type: ignore[union-attr]
        foreign = await client.call_tool("search_memory", {"query": "deadline", "chat_id": str(p.bens.id)})
        assert foreign.is_error and "not found" in foreign.content[0].text  # type: ignore[union-attr]
        hostile = await client.call_tool("search_memory", {"query": "ignore previous instructions note"})
        quoted = hostile.content[0].text  # type: ignore[union-attr]
        assert "\n## SYSTEM" not in quoted and "\\#\\# SYSTEM" in quoted and "</excerpts>" not in quoted
        bad = await client.call_tool("search_memory", {"query": "deadline", "until": "soon"})
        assert bad.is_error and "is not a date" in bad.content[0].text  # type: ignore[union-attr]


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from cli_environment(db_url, monkeypatch)


async def _seed(url: str) -> People:
    from orrery.demo.workspace import load_demo

    db = Database.from_settings(settings_for(url))
    try:
        demo = await load_demo(db, "cli-secret")
        async with db.transaction() as s:
            return await people(s, demo.user_id, demo.project_id)
    finally:
        await db.dispose()


@pytest.mark.demo_db
def test_the_cli(cli_env: None, db_url: str) -> None:
    p = asyncio.run(_seed(db_url))
    code, output = invoke("memory", "search", "--user", MAYA, "sprint deadline")
    assert code == 0 and "April 5" in output and "Sprint review" in output and "May 20" not in output
    assert "shares words" in output  # the receipt's reasons, one per excerpt
    code, output = invoke(
        "memory", "search", "sprint deadline", "--user", MAYA, "--since", "2025-03-10", "--json"
    )
    found = json.loads(output)
    assert code == 0 and "April 5" in found["result"] and "April 1" not in found["result"]
    assert found["included"] and all(i["date"] >= "2025-03-10" for i in found["included"])
    code, output = invoke("memory", "search", "ignore previous instructions note", "--user", MAYA, "--json")
    assert code == 0 and "\\#\\# SYSTEM" in json.loads(output)["result"]  # quoted as data
    code, output = invoke(
        "memory", "search", "deadline", "--user", MAYA, "--chat", str(p.review.id), "--json"
    )
    assert {i["chat_id"] for i in json.loads(output)["included"]} == {str(p.review.id)}
    for args, message in [
        (["--chat", str(p.bens.id)], "not found"),
        (["--since", "2025-13-01"], "is not a date"),
        (["--since", "2025-03-10", "--until", "2025-03-01"], "is after until"),
    ]:
        code, output = invoke("memory", "search", "deadline", "--user", MAYA, *args)
        assert code == 1 and message in " ".join(output.split()), (args, output)
    code, output = invoke("memory", "search", "deadline", "--user", "nobody@example.org")
    assert code == 1 and "not found" in output
    env = {"DATABASE_URL": db_url, "ORRERY_SECRET_KEY": "cli-secret", "ORRERY_BUDGET_SEARCH_MEMORY": "100"}
    command = ["memory", "search", "sprint deadline", "--user", MAYA, "--json"]
    code, stdout, stderr = server_launcher().run_split(command, None, env)  # the console script
    assert code == 0, stderr
    found = json.loads(stdout)
    assert found["budget"] == 100 and 0 < found["tokens"] <= 100 and "May 20" not in found["result"]


async def test_a_chat_turn_with_the_offline_model_searches_when_asked(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    async with db.transaction() as s:
        await people(s, demo.user_id, demo.project_id)
    sid = (await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
    answered = await api.post(
        f"/v1/sessions/{sid}/messages",
        json={"content": "Search my earlier chats for the sprint deadline."},
        headers={"Accept": "application/json"},
    )
    assert answered.status_code == 200, answered.text
    reply = answered.json()["reply"]
    assert reply.startswith("Here is what I found in your earlier chats:"), reply
    assert "April 5" in reply and "May 20" not in reply and "June 9" not in reply
    assert '"included"' not in reply and "chat_id" not in reply  # the receipt is not the model's to read
