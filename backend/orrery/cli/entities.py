"""`orrery entities`: create an entity or change one, including designating the project context
document (`--context-document`), which before only the demo loader could do."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import UserOpt, acting_user, out, project_scope, run, with_db

entities_app = typer.Typer(help="Entities: create one, or change one.", no_args_is_help=True)
ContextOpt = Annotated[
    bool | None,
    typer.Option(
        "--context-document/--no-context-document",
        help="Designate (or release) the project context document (documents only; one per project).",
    ),
]


def _show(entity: Any, as_json: bool) -> None:
    record = {
        "id": str(entity.id),
        "kind": entity.kind,
        "name": entity.name,
        "state": entity.state,
        "is_context_document": entity.is_context_document,
    }
    if as_json:
        print(json.dumps(record))
        return
    marker = " (project context document)" if entity.is_context_document else ""
    out.print(f"{entity.kind} {entity.id} ", end="")
    out.print(f"{entity.name}{marker}", markup=False, highlight=False)


@entities_app.command("create")
def entities_create(
    kind: Annotated[str, typer.Argument(help="task, plan, goal, milestone, document or output.")],
    name: Annotated[str, typer.Argument(help="The entity's name.")],
    description: Annotated[str | None, typer.Option(help="A description.")] = None,
    state: Annotated[str, typer.Option(help="Its state.")] = "active",
    context_document: ContextOpt = None,
    project: Annotated[str | None, typer.Option(help="Project id (default: the only one).")] = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entity as JSON.")] = False,
) -> None:
    """Create an entity in a project; print its kind, id and name."""
    from orrery.repo import graph

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            user_id, project_id = await project_scope(session, project, user)
            spec = graph.EntitySpec(
                kind=kind,
                name=name,
                state=state,
                description=description,
                is_context_document=bool(context_document),
            )
            return await graph.create_entity(session, user_id, project_id, spec)

    _show(run(lambda s: with_db(s, body)), as_json)


@entities_app.command("update")
def entities_update(
    entity_id: Annotated[str, typer.Argument(help="The entity's id.")],
    name: Annotated[str | None, typer.Option(help="A new name.")] = None,
    state: Annotated[str | None, typer.Option(help="A new state.")] = None,
    description: Annotated[str | None, typer.Option(help="A new description.")] = None,
    context_document: ContextOpt = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entity as JSON.")] = False,
) -> None:
    """Change an entity's fields (only those given)."""
    from orrery.repo import graph

    given = {
        "name": name,
        "state": state,
        "description": description,
        "is_context_document": context_document,
    }
    changes = {k: v for k, v in given.items() if v is not None}

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            user_id = await acting_user(session, user, entity_id)
            return await graph.update_entity(session, user_id, entity_id, **changes)

    _show(run(lambda s: with_db(s, body)), as_json)
