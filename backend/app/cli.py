"""The `orrery` entry point: the command line door plus the commands that launch servers (`serve`,
`mcp`), with plugins registered once before any command runs."""

from __future__ import annotations

import sys

import typer

from backend.app import serve
from backend.cli import app as cli_app


def build() -> typer.Typer:
    """The whole command line: every door command, then the server launchers (added once)."""
    if not any(c in cli_app.registered_commands for c in serve.app.registered_commands):
        cli_app.registered_commands.extend(serve.app.registered_commands)
        cli_app.callback()(_register_plugins)
    return cli_app


SERVERS = ("serve", "mcp")
"""Commands whose server registers plugins itself, in the process that serves (so `orrery serve`
answers /health without paying for them first)."""


def _register_plugins(ctx: typer.Context) -> None:
    """Orrery: a backend for chat assistants that work in context."""
    if ctx.invoked_subcommand in SERVERS:
        return
    from backend.config import get_settings
    from backend.plugins import ensure_plugins

    ensure_plugins(get_settings())


def main() -> None:
    """Console-script entry point."""
    try:
        build()()
    except KeyboardInterrupt:
        sys.exit(130)
