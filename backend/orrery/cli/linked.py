"""`orrery linked`: an entity's linked entities, as the agent sees them."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import (
    acting_user,
    entity_kind,
    out,
    run,
    with_db,
)

app = typer.Typer()


@app.command("linked")
def linked(
    entity_id: Annotated[str, typer.Argument(help="The entity's id.")],
    filter_kind: Annotated[
        str, typer.Option("--filter", help="Only this kind (task, plan, ...), or all.")
    ] = "all",
    user: Annotated[
        str | None, typer.Option(help="Act as this user (id or email); default: the project owner.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structure as JSON.")] = False,
) -> None:
    """Print everything linked to an entity: what the `get_linked_entities` tool returns."""
    from dataclasses import asdict

    from orrery.graph.linked import load_linked_entities_context
    from orrery.graph.linked_format import format_full

    async def body(db: Any) -> Any:
        async with db.sessions() as session:
            user_id = await acting_user(session, user, entity_id)
            kind = await entity_kind(session, user_id, entity_id)
            return await load_linked_entities_context(
                session,
                user_id,
                entity_id,
                kind,
                max_per_type=None,
                include_descriptions=True,
                filter_kind=None if filter_kind == "all" else filter_kind,
            )

    result = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps({**asdict(result), "total": result.total}, default=str))
    else:
        out.print(format_full(result), markup=False, highlight=False)
