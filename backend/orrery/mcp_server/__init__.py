"""The tool registry over MCP (the official `mcp` SDK): the same functions the agents call.

`orrery mcp` serves stdio for Claude Desktop, Cursor and other MCP clients; the calling user is the
owner of `ORRERY_API_KEY`. `orrery mcp --http` serves streamable HTTP at `/mcp`, where every request
acts for the user of its `Authorization: Bearer <api key>`. The project is `--project` /
`ORRERY_PROJECT_ID`, or the user's first project. Tool failures the model can fix come back as MCP
tool errors with the same readable message.

This package imports only `stdio` (the standard library) up front; the server (`server`, the SDK,
the registry) is imported on first use, so `orrery mcp` answers `initialize` within a few hundred
milliseconds of starting.
"""

from __future__ import annotations

import typing
from typing import Any

from orrery.mcp_server.stdio import serve_stdio

if typing.TYPE_CHECKING:
    from orrery.mcp_server.server import build_server, http_app, run_http

__all__ = ["build_server", "http_app", "run_http", "serve_stdio"]
_LAZY = frozenset({"build_server", "http_app", "run_http"})


def __getattr__(name: str) -> Any:
    """The server's functions, imported on first use."""
    if name in _LAZY:
        from orrery.mcp_server import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
