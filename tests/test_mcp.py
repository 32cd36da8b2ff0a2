"""The MCP server over stdio, driven by the official `mcp` client.

The client starts `orrery mcp` as its stdio server through a stand-in process that has the test
process's launcher fork the real console script onto the stand-in's pipes (`Launcher.command` in
tests/support/entrypoint.py): a cold start cost ~4 CPU-s of imports each, eight times. The cold console
script serving the official client is tests/test_mcp_stdio.py's."""

from __future__ import annotations

import os
from typing import Any

import pytest

from orrery.config import Settings
from orrery.db.engine import Database
from tests.support.entrypoint import server_launcher


async def _session(db_url: str, api_key: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "ORRERY_API_KEY": api_key,
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_ENV": "test",
    }
    command, *args = server_launcher().command(["mcp"])
    return StdioServerParameters(command=command, args=args, env=env)


async def test_mcp_tools_over_stdio(db: Database, settings: Settings, db_url: str, demo: Any) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

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
        assert story.content[0].text.startswith("# Story US-004")  # text, snippets in fenced blocks


async def test_mcp_tools_describe_every_parameter_and_refuse_unknown_ones(
    db: Database, settings: Settings, db_url: str, demo: Any
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    from orrery.plugins import ensure_plugins
    from orrery.tools.registry import REGISTRY

    ensure_plugins()  # this process's registry, like the server's, includes the example plugin's tool
    async with (
        stdio_client(await _session(db_url, demo.api_key)) as streams,
        ClientSession(*streams) as client,
    ):
        await client.initialize()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(REGISTRY) <= set(tools)
        assert "project_pulse" in tools  # the installed example plugin's tool, like the built-ins
        for name, tool in tools.items():
            props = tool.input_schema["properties"]
            assert all(p.get("description") for p in props.values()), name
            assert tool.input_schema.get("additionalProperties") is False, name
            assert (
                tool.annotations is not None and tool.annotations.read_only_hint is REGISTRY[name].read_only
            )
        assert tools["update_entry"].annotations.destructive_hint is True
        assert tools["index_docs"].annotations.idempotent_hint is True
        assert "Args:" not in (tools["build_context"].description or "")

        typo = await client.call_tool("load_context_for_task", {"task_descripton": "overage billing"})
        assert typo.is_error
        assert "unknown argument(s) task_descripton" in typo.content[0].text
        assert "task_description" in typo.content[0].text


async def test_mcp_stdio_with_a_bad_key_answers_with_a_tool_error(db_url: str) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(await _session(db_url, "orr_nope_nope")) as streams,
        ClientSession(*streams) as client,
    ):
        await client.initialize()
        result = await client.call_tool("search_knowledge", {"query": "billing"})
        assert result.is_error and "API key" in result.content[0].text, result.content


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_mcp_over_streamable_http_with_bearer_keys(db: Database, settings: Settings, demo: Any) -> None:
    import asyncio

    import httpx2
    import uvicorn
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    from orrery.mcp_server import http_app
    from orrery.repo import identity

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
            # a plain bearer challenge: no OAuth resource metadata to send clients after
            challenge = anonymous.headers["www-authenticate"]
            assert challenge.startswith("Bearer") and "resource_metadata" not in challenge
            discovery = await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")
            assert discovery.status_code == 404
            wrong = await http.post(
                f"{base}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Authorization": "Bearer orr_wrong_key"},
            )
            # a key that is wrong: 403 saying so, not a 401 that sends OAuth clients into discovery
            assert wrong.status_code == 403 and "www-authenticate" not in wrong.headers
            refusal = wrong.json()  # a JSON-RPC error the MCP SDK's client reports with its message
            assert refusal["jsonrpc"] == "2.0" and refusal["error"]["data"]["error"] == "invalid_key"
            assert "invalid Orrery API key" in refusal["error"]["message"]
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer orr_wrong_key"}) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as streams,
            ClientSession(*streams[:2]) as client,
        ):
            with pytest.raises(MCPError) as refused:  # the official client reports the refusal
                await client.initialize()
            assert "invalid Orrery API key" in str(refused.value)
    finally:
        server.should_exit = True
        await task


async def test_mcp_serves_entries_and_stories_as_resources_and_agents_as_prompts(
    db: Database, settings: Settings, db_url: str, demo: Any
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    from orrery import __version__

    async with (
        stdio_client(await _session(db_url, demo.api_key)) as streams,
        ClientSession(*streams) as client,
    ):
        hello = await client.initialize()
        assert hello.server_info.name == "orrery" and hello.server_info.version == __version__
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert "orrery://kb/BR-012" in listed and "Usage overage billing" in (
            listed["orrery://kb/BR-012"].title or ""
        )
        entry = await client.read_resource("orrery://kb/BR-012")
        assert "## BR-012: Usage overage billing" in entry.contents[0].text
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {"orrery://kb/{code}", "orrery://stories/{story_id}"}
        story = await client.read_resource("orrery://stories/US-004")
        assert "US-004" in story.contents[0].text
        with pytest.raises(Exception, match="not found"):
            await client.read_resource("orrery://kb/ZZ-404")
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert {"coach", "planner", "retro"} <= prompts
        prompt = await client.get_prompt("planner", {"request": "plan the launch"})
        assert prompt.messages[0].content.text.endswith("Request: plan the launch")
        wrong = await client.call_tool(
            "load_context_for_task", {"task_description": "billing", "max_hops": "far"}
        )
        assert wrong.is_error
        assert wrong.content[0].text.startswith("invalid arguments for load_context_for_task: max_hops:")


async def test_mcp_http_answers_a_cors_preflight_from_a_configured_origin(
    db: Database, settings: Settings, demo: Any
) -> None:
    import asyncio

    import httpx2
    import uvicorn

    from orrery.mcp_server import http_app

    inspector = "http://localhost:6274"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    configured = settings.model_copy(update={"cors_origins": inspector})
    app = http_app(db, configured, base)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        asks = {
            "Origin": inspector,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        }
        async with httpx2.AsyncClient(base_url=base) as http:
            preflight = await http.options("/mcp", headers=asks)
            assert preflight.status_code == 204 and not preflight.content
            assert preflight.headers["access-control-allow-origin"] == inspector
            assert "POST" in preflight.headers["access-control-allow-methods"]
            assert "authorization" in preflight.headers["access-control-allow-headers"]
            stranger = await http.options("/mcp", headers={**asks, "Origin": "http://evil.example"})
            assert stranger.status_code == 400
            hello = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "inspector", "version": "1"},
                },
            }
            answer = await http.post(
                "/mcp",
                json=hello,
                headers={
                    "Origin": inspector,
                    "Authorization": f"Bearer {demo.api_key}",
                    "Accept": "application/json, text/event-stream",
                },
            )
            assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == inspector
            assert "mcp-session-id" in answer.headers["access-control-expose-headers"].lower()
    finally:
        server.should_exit = True
        await task


async def test_mcp_stdio_resources_with_a_bad_key_or_a_foreign_project_are_clean_errors(
    db_url: str, demo: Any
) -> None:
    import tempfile

    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    for api_key, project, says in (
        ("orr_nope_nope", None, "API key"),
        (demo.api_key, "00000000-0000-0000-0000-000000000001", "not found"),
    ):
        params = await _session(db_url, api_key)
        if project:
            params.env["ORRERY_PROJECT_ID"] = project
        with tempfile.TemporaryFile("w+") as errlog:  # the server's stderr
            async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as client:
                await client.initialize()
                for read in (
                    lambda: client.read_resource("orrery://kb/BR-012"),
                    lambda: client.list_resources(),
                ):
                    with pytest.raises(MCPError) as refused:
                        await read()
                    assert refused.value.code == -32600 and says in refused.value.error.message
            errlog.seek(0)
            assert "Traceback" not in errlog.read()
