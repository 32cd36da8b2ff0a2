"""The MCP server over stdio, driven by the official `mcp` client."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from backend.config import Settings
from backend.db.engine import Database
from backend.demo.workspace import load_demo


async def _session(db_url: str, api_key: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "ORRERY_API_KEY": api_key,
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_ENV": "test",
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "backend.cli", "mcp"], env=env)


async def test_mcp_tools_over_stdio(db: Database, settings: Settings, db_url: str) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    demo = await load_demo(db, settings.secret_key)
    params = await _session(db_url, demo.api_key)
    async with stdio_client(params) as streams, ClientSession(*streams) as client:
        await client.initialize()
        names = {t.name for t in (await client.list_tools()).tools}
        assert {
            "load_context_for_task",
            "get_linked_entities",
            "build_context",
            "get_entry",
            "get_context_for_story",
        } <= names
        packet = await client.call_tool("load_context_for_task", {"task_description": "overage billing"})
        assert not packet.is_error and "## Context Loaded" in packet.content[0].text
        linked = await client.call_tool(
            "get_linked_entities", {"entity_id": str(demo.focus["task"]), "entity_kind": "task"}
        )
        assert not linked.is_error and "Launch marketing" in linked.content[0].text
        foreign = await client.call_tool(
            "get_linked_entities",
            {"entity_id": "00000000-0000-4000-8000-000000000000", "entity_kind": "task"},
        )
        assert foreign.is_error and "not found" in foreign.content[0].text
        story = await client.call_tool("get_context_for_story", {"story_id": "US-004"})
        assert json.loads(story.content[0].text)["story"]["id"] == "US-004"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_mcp_over_streamable_http_with_bearer_keys(db: Database, settings: Settings) -> None:
    import asyncio

    import httpx2
    import uvicorn
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from backend.mcp_server import http_app
    from backend.repo import identity

    demo = await load_demo(db, settings.secret_key)
    async with db.transaction() as s:
        eve = await identity.create_user(s, "eve@example.org", "Eve")
        _, eve_key = await identity.issue_api_key(s, eve.id, "k", settings.secret_key)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(
        uvicorn.Config(http_app(db, settings, base), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {demo.api_key}"}) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as streams,
            ClientSession(*streams[:2]) as client,
        ):
            await client.initialize()
            linked = await client.call_tool(
                "get_linked_entities", {"entity_id": str(demo.focus["task"]), "entity_kind": "task"}
            )
            assert not linked.is_error and "Launch marketing" in linked.content[0].text
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {eve_key}"}) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as streams,
            ClientSession(*streams[:2]) as client,
        ):
            await client.initialize()
            foreign = await client.call_tool(
                "get_linked_entities", {"entity_id": str(demo.focus["task"]), "entity_kind": "task"}
            )
            assert foreign.is_error and "not found" in foreign.content[0].text
        async with httpx2.AsyncClient() as http:
            anonymous = await http.post(
                f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            )
            assert anonymous.status_code == 401
    finally:
        server.should_exit = True
        await task
