"""`orrery plugins`: what installed packages and ORRERY_PLUGINS contribute, validated."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from orrery.cli.common import err, out
from orrery.config import get_settings

app = typer.Typer()


@app.command("plugins")
def plugins_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")] = False,
) -> None:
    """List contributed strategies, tools, agents and expertise (a bad plugin: the error, exit 1)."""
    from rich.table import Table

    from orrery.plugins import ENTRY_POINT_GROUPS, PluginError, ensure_plugins

    try:
        found = ensure_plugins(get_settings())
    except PluginError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from None
    rows = [
        {"kind": c.kind, "name": c.name, "plugin": c.plugin, "source": c.source, "description": c.description}
        for c in found
    ]
    if as_json:
        out.print(json.dumps(rows), markup=False, highlight=False)
        return
    if not rows:
        groups = ", ".join(ENTRY_POINT_GROUPS)
        out.print(f"No plugins: no package has {groups} entry points and ORRERY_PLUGINS is empty.")
        return
    table = Table("kind")
    table.add_column("name", no_wrap=True)
    table.add_column("plugin", overflow="fold")
    table.add_column("description", ratio=1)
    for row in rows:
        table.add_row(row["kind"], row["name"], row["plugin"], row["description"])
    out.print(table)
