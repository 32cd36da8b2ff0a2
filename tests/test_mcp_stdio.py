"""`orrery mcp` over stdio answers `initialize` without the SDK, then hands the connection to it: the
answer is the SDK's own, the SDK's connection is initialized, and the real entry point serves a
real client (tests/test_mcp.py covers the tools, resources and prompts themselves)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from orrery.config import Settings
from orrery.mcp_server.handshake import (
    HANDSHAKE_VERSIONS,
    REPLAYED_ID,
    Incoming,
    Outgoing,
    initialize_answer,
)

ORRERY = str(Path(sys.executable).with_name("orrery"))


def _initialize(version: str, request_id: int | str = 1) -> str:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}) + "\n"


def test_the_handshake_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2026-07-28", "1999-01-01"])
async def test_the_fast_answer_is_the_one_the_sdk_gives(version: str) -> None:
    from orrery.mcp_server.server import build_stdio_server

    async def nobody() -> Any:
        raise AssertionError("initialize needs no caller")

    settings = Settings(_env_file=None, database_url="sqlite+aiosqlite://", secret_key="s")
    server = build_stdio_server(nobody, settings)
    wire = io.StringIO()
    await server.serve(Incoming(_initialize(version, REPLAYED_ID), io.StringIO()), Outgoing(wire, None))
    sdk = json.loads(wire.getvalue())
    assert initialize_answer(_initialize(version, REPLAYED_ID)) == sdk
    assert sdk["result"]["protocolVersion"] == (version if version in HANDSHAKE_VERSIONS else "2025-11-25")
    assert await server.list_tools()  # the tools, built in the background, are served after it


@pytest.mark.parametrize(
    "line",
    [
        "",
        "not json\n",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n',
        '{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n',
    ],
)
def test_anything_but_a_well_formed_initialize_is_left_to_the_sdk(line: str) -> None:
    assert initialize_answer(line) is None


def test_the_sdks_answer_to_the_replay_is_dropped_and_a_difference_logged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ours = initialize_answer(_initialize("2025-06-18", 7))
    assert ours is not None and ours["id"] == 7
    wire = io.StringIO()
    same = Outgoing(wire, ours)
    same.write(json.dumps({**ours, "id": REPLAYED_ID}) + "\n")
    same.write('{"jsonrpc":"2.0","id":2,"result":{}}\n')
    assert wire.getvalue() == '{"jsonrpc":"2.0","id":2,"result":{}}\n'
    assert capsys.readouterr().err == ""
    other = Outgoing(io.StringIO(), ours)
    other.write(json.dumps({"jsonrpc": "2.0", "id": REPLAYED_ID, "result": {"capabilities": {}}}) + "\n")
    assert "initialize answered" in capsys.readouterr().err


def test_only_a_plain_stdio_command_line_skips_the_typer_app() -> None:
    from orrery.cli.server import serve_mcp_stdio

    for argv in (["serve"], ["mcp", "--http"], ["mcp", "--help"], ["mcp", "--project"], ["mcp", "-x"]):
        assert serve_mcp_stdio(argv) is False, argv


def _env(db_url: str, api_key: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": db_url,
        "ORRERY_API_KEY": api_key,
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_ENV": "test",
    }


SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
"""The hand-over to the SDK does not depend on the database (tests/test_mcp.py runs both)."""


@SQLITE_ONLY
async def test_the_console_script_serves_a_real_client(db_url: str, demo: Any) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["mcp", "--project", str(demo.project_id)]
    params = StdioServerParameters(command=ORRERY, args=args, env=_env(db_url, demo.api_key))
    async with stdio_client(params) as streams, ClientSession(*streams) as client:
        hello = await client.initialize()
        assert hello.server_info.name == "orrery" and hello.capabilities.tools is not None
        assert "search_knowledge" in {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_knowledge", {"query": "billing"})
        assert not found.is_error and "BR-012" in found.content[0].text


async def _stdio_server(db_url: str, demo: Any) -> asyncio.subprocess.Process:
    """`orrery mcp` on stdio for the demo project, its three streams piped (the raw protocol's view)."""
    return await asyncio.create_subprocess_exec(
        ORRERY,
        "mcp",
        f"--project={demo.project_id}",
        env=_env(db_url, demo.api_key),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


@SQLITE_ONLY
async def test_a_client_that_pipelines_its_first_messages_is_served(db_url: str, demo: Any) -> None:
    """`initialize`, `initialized` and `tools/list` in one write: the SDK gets all three, in order."""
    proc = await _stdio_server(db_url, demo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    listing = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    proc.stdin.write((_initialize("2025-06-18", 1) + initialized + listing).encode())
    await proc.stdin.drain()
    first = json.loads(await asyncio.wait_for(proc.stdout.readline(), 120))
    second = json.loads(await asyncio.wait_for(proc.stdout.readline(), 120))
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert first == initialize_answer(_initialize("2025-06-18", 1))
    assert second["id"] == 2 and "search_knowledge" in {t["name"] for t in second["result"]["tools"]}
    assert "initialize answered" not in (await proc.stderr.read()).decode()


@SQLITE_ONLY
async def test_a_request_with_unstorable_text_gets_a_readable_error(db_url: str, demo: Any) -> None:
    """`resources/read` (or any request) holding a lone surrogate or a NUL is answered with the rule
    every door applies, in words; the SDK's parser would drop the line with no answer at all."""
    proc = await _stdio_server(db_url, demo)
    assert proc.stdin is not None and proc.stdout is not None
    initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    reads = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": {"uri": uri}}) + "\n"
        for i, uri in ((2, "orrery://kb/\ud800"), (3, "orrery://kb/a\x00b"), (4, "orrery://kb/BR-012"))
    )
    proc.stdin.write((_initialize("2025-06-18", 1) + initialized + reads).encode())
    await proc.stdin.drain()
    answers = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 120)) for _ in range(4)]
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 60) == 0
    by_id = {a["id"]: a for a in answers}
    assert by_id[2]["error"] == {
        "code": -32602,
        "message": "params.uri contains a lone surrogate (U+D800, invalid Unicode), which cannot be stored",
    }
    nul = "params.uri contains a NUL character (U+0000), which cannot be stored"
    assert by_id[3]["error"]["message"] == nul
    assert "BR-012" in by_id[4]["result"]["contents"][0]["text"]  # the connection serves on
