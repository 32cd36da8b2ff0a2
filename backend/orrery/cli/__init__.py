"""The `orrery` command line, one module per command group (the typer app is `orrery.cli.commands`).

`main` serves `orrery mcp` over stdio without building the typer app: an MCP client waits for the
answer to `initialize`, and the app imports every command module first.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    from pydantic import ValidationError

    from orrery.cli.server import serve_mcp_stdio

    try:
        if not serve_mcp_stdio(sys.argv[1:]):
            from orrery.cli.commands import app

            app()
    except KeyboardInterrupt:
        sys.exit(130)
    except ValidationError as exc:  # the settings (environment, .env) refused: say why, no traceback
        sys.exit(settings_error(exc))


def settings_error(exc: Any) -> str:
    """The one line per refused setting that `orrery` prints instead of a traceback."""
    from orrery.config import Settings

    lines = []
    for error in exc.errors():
        message = str(error.get("msg", "")).removeprefix("Value error, ")
        field = ".".join(str(part) for part in error.get("loc", ()))
        if field in Settings.model_fields and not Settings.model_fields[field].validation_alias:
            field = f"ORRERY_{field.upper()}"  # the variable the person set
        lines.append(f"error: {message}" if not field else f"error: {field}: {message}")
    return "\n".join(lines) or f"error: {exc}"


def __getattr__(name: str) -> Any:
    """`orrery.cli.app`, the typer app, imported on first use."""
    if name == "app":
        from orrery.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
