"""`orrery serve` (the HTTP API) and `orrery mcp` (the MCP server).

Only typer is imported up front: `orrery.cli.main` calls `serve_mcp_stdio` before building the app,
so `orrery mcp` (stdio) answers `initialize` before the rest of the CLI is imported.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from orrery.config import Settings

app = typer.Typer()


def serve_mcp_stdio(argv: list[str]) -> bool:
    """Serve `orrery mcp [--project ID]` (stdio) without the typer app; False for any other command
    line (the app parses it, `mcp_command` included)."""
    match argv:
        case ["mcp"]:
            project = None
        case ["mcp", "--project", str(project)] if not project.startswith("-"):
            pass
        case ["mcp", str(option)] if option.startswith("--project="):
            project = option.removeprefix("--project=")
        case _:
            return False
    _stdio(project)
    return True


def _stdio(project: str | None) -> None:
    """Serve stdio as the user of ORRERY_API_KEY; an `OrreryError` is one line on stderr and exit 1
    (`SystemExit`: this runs outside the typer app too)."""
    from orrery.errors import OrreryError
    from orrery.mcp_server import serve_stdio

    try:  # answers `initialize` at once; the schema and the key are checked before the first tool call
        serve_stdio(os.environ.get("ORRERY_API_KEY"), project or os.environ.get("ORRERY_PROJECT_ID"))
    except OrreryError as exc:
        from orrery.cli.common import err

        err.print(f"[bold red]error:[/] {exc}")
        raise SystemExit(1) from None


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default ORRERY_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default ORRERY_PORT).")] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Worker processes (PostgreSQL only: SQLite serves one server process per file).",
        ),
    ] = 1,
) -> None:
    """Start the HTTP API (refuses an un-migrated database)."""
    import asyncio

    import uvicorn

    from orrery.cli.common import err, run, with_db
    from orrery.config import get_settings

    async def check(settings: Settings) -> None:
        await with_db(settings, lambda _db: asyncio.sleep(0))

    run(check)
    settings = get_settings()
    if workers > 1 and settings.dialect != "postgresql":
        err.print(
            "[bold red]error:[/] --workers needs PostgreSQL: SQLite serves one server process "
            "(set DATABASE_URL=postgresql+asyncpg://...)"
        )
        raise typer.Exit(2)
    from orrery.ops.server_lock import ServerLockError, hold_server_lock

    try:
        hold_server_lock(settings)  # SQLite: one server per file, until this process ends
    except ServerLockError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    from orrery.ops.metrics_dir import prepare_metrics_dir
    from orrery.services.http_parser import CappedHttpTools

    prepare_metrics_dir(settings.prometheus_multiproc_dir, workers=workers)
    if workers > 1 and _fork_workers():
        from orrery.services.warm import load_shared

        load_shared(settings)  # before the workers exist: they share it
    uvicorn.run(
        "orrery.app.boot:create_booting_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level,
        workers=workers,
        http=CappedHttpTools,  # httptools, with h11's cap on an unfinished request head
        access_log=False,  # `orrery.http` logs each request once, with its id (`orrery.ops.logs`)
    )


def _fork_workers() -> bool:
    """Have uvicorn fork its workers from this process (on Linux), instead of starting each
    as a fresh interpreter: what this process loaded before (`services.warm`) is then shared by all
    of them, not held once per worker. Whether it will."""
    import multiprocessing

    from uvicorn import _subprocess

    if not sys.platform.startswith("linux") or not hasattr(_subprocess, "spawn"):
        return False  # macOS can fork, but not safely once system frameworks are loaded
    if not _metrics_survive_fork():
        return False
    setattr(_subprocess, "spawn", multiprocessing.get_context("fork"))  # noqa: B010  # read per worker
    os.register_at_fork(after_in_child=_default_signals)
    return True


def _metrics_survive_fork() -> bool:
    """prometheus_client picks how it counts when first imported: imported before the metrics
    directory was set (a host that embeds Orrery, a launcher that forks this command), it counts in
    each process's memory only, which forked workers would inherit and `/metrics` never read; fresh
    interpreters import it anew."""
    values = sys.modules.get("prometheus_client.values")
    if values is None or not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return True
    return bool(getattr(values.ValueClass, "_multiprocess", False))


def _default_signals() -> None:
    """A forked worker starts with a fresh interpreter's signal handlers, not the supervisor's (which
    queue signals for its own loop): stopped while still starting, it stops, until uvicorn installs
    its own."""
    import signal

    for name in ("SIGTERM", "SIGHUP", "SIGTTIN", "SIGTTOU"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


@app.command("mcp")
def mcp_command(
    project: Annotated[
        str | None, typer.Option("--project", help="Project id (default: the user's first).")
    ] = None,
    http: Annotated[
        bool,
        typer.Option("--http", help="Serve streamable HTTP at /mcp (bearer API keys) instead of stdio."),
    ] = False,
    host: Annotated[str, typer.Option(help="With --http: interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="With --http: port.")] = 8765,
) -> None:
    """Serve the tools over MCP: stdio as the user of ORRERY_API_KEY, or HTTP for any key's user."""
    if not http:
        _stdio(project)
        return
    import asyncio

    from orrery.cli.common import err, with_db
    from orrery.config import get_settings
    from orrery.errors import OrreryError
    from orrery.mcp_server import run_http

    settings = get_settings()
    try:
        asyncio.run(with_db(settings, lambda _db: asyncio.sleep(0)))  # refuse an un-migrated database
        run_http(settings, host, port, project or os.environ.get("ORRERY_PROJECT_ID"))
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
