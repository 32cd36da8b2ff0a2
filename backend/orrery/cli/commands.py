"""The `orrery` typer app: every command group, and plugins registered before any command runs.

Heavy modules are imported inside the commands so `orrery --help` stays instant.
"""

from __future__ import annotations

from typing import Any

import typer

from orrery.cli import (
    chat,
    context,
    db,
    demo,
    docs,
    embeddings,
    entities,
    eval,
    facts,
    jobs,
    kb,
    keys,
    linked,
    memory,
    memory_search,  # noqa: F401  (adds `memory search` to `memory_app`)
    plugins,
    server,
    sessions,
    tools,
    usage,
    users,
    web,
)

app = typer.Typer(help="Orrery: a backend for chat assistants that work in context.", no_args_is_help=True)
app.add_typer(db.db_app, name="db")
app.add_typer(sessions.sessions_app, name="sessions")
app.add_typer(context.context_app, name="context")
app.add_typer(kb.kb_app, name="kb")
app.add_typer(entities.entities_app, name="entities")
app.add_typer(keys.keys_app, name="keys")
app.add_typer(docs.docs_app, name="docs")
app.add_typer(demo.demo_app, name="demo")
app.add_typer(users.users_app, name="users")
app.add_typer(eval.eval_app, name="eval")
app.add_typer(facts.facts_app, name="facts")
app.add_typer(jobs.jobs_app, name="jobs")
app.add_typer(embeddings.embeddings_app, name="embeddings")
app.add_typer(web.web_app, name="web")
app.add_typer(memory.memory_app, name="memory")
for module in (server, linked, chat, usage, plugins, tools):
    app.registered_commands.extend(module.app.registered_commands)

SERVERS = ("serve", "mcp")
"""Commands whose server registers plugins itself, in the process that serves (so `orrery serve`
answers /health without paying for them first)."""


@app.callback()
def _register_plugins(ctx: typer.Context) -> None:
    """Orrery: a backend for chat assistants that work in context."""
    if ctx.invoked_subcommand in SERVERS:
        return
    from orrery.cli.common import err
    from orrery.config import get_settings
    from orrery.plugins import PluginError, ensure_plugins

    cli_logging(get_settings())
    try:
        ensure_plugins(get_settings())  # once per process, before any command reads the registries
    except PluginError as exc:  # one line that names the plugin and the fix, not a traceback
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from None


def cli_logging(settings: Any) -> None:
    """Logs on stderr, never stdout: stdout carries only the command's output (`--json` parses
    while a background job logs). Warnings and errors only, as plain lines, unless
    `ORRERY_LOG_LEVEL` is set (then every record at that level, in the log format)."""
    from orrery.ops.logs import configure_logging

    chosen = "log_level" in settings.model_fields_set
    configure_logging(settings, shown=None if chosen else "warning", plain=not chosen)
