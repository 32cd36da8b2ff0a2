"""The `orrery` command line, one module per command group (the typer app is `orrery.cli.commands`).

`main` serves `orrery mcp` over stdio without building the typer app: an MCP client waits for the
answer to `initialize`, and the app imports every command module first.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    from orrery.cli.server import serve_mcp_stdio

    try:
        if not serve_mcp_stdio(sys.argv[1:]):
            from orrery.cli.commands import app

            app()
    except KeyboardInterrupt:
        sys.exit(130)


def __getattr__(name: str) -> Any:
    """`orrery.cli.app`, the typer app, imported on first use."""
    if name == "app":
        from orrery.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
