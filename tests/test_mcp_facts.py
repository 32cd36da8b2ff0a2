"""Remembered facts over MCP: the fact tools (from the registry) and the `orrery://me/facts`
resource, scoped to the caller; MCP has no chats, so a fact said there has no source."""

from __future__ import annotations

import re
from typing import Any

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import facts
from tests.support.factories import make_user
from tests.test_mcp import _session


async def test_mcp_fact_tools_and_resource(db: Database, settings: Settings, db_url: str, demo: Any) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        theirs, _ = await facts.create_fact(s, eve.id, "Eve's secret")
    async with (
        stdio_client(await _session(db_url, demo.api_key)) as streams,
        ClientSession(*streams) as client,
    ):
        await client.initialize()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"remember_fact", "forget_fact"} <= set(tools)
        assert tools["forget_fact"].annotations.destructive_hint is True
        saved = await client.call_tool("remember_fact", {"text": "Prefers tea", "subject": "drink"})
        assert not saved.is_error and "Prefers tea" in saved.content[0].text
        fact_id = re.search(r"\[fact ([0-9a-f-]{36})\]", saved.content[0].text).group(1)  # type: ignore[union-attr]
        listed = await client.read_resource("orrery://me/facts")
        assert "Prefers tea" in listed.contents[0].text and fact_id in listed.contents[0].text
        assert "Eve's secret" not in listed.contents[0].text
        foreign = await client.call_tool("forget_fact", {"fact_id": str(theirs.id)})
        assert foreign.is_error and "not found" in foreign.content[0].text
        gone = await client.call_tool("forget_fact", {"fact_id": fact_id})
        assert not gone.is_error and "Forgot" in gone.content[0].text
        assert "No remembered facts" in (await client.read_resource("orrery://me/facts")).contents[0].text
    async with db.sessions() as s:
        assert [f.text for f in await facts.list_facts(s, eve.id)] == ["Eve's secret"]
