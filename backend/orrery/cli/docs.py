"""`orrery docs`: index a docs folder, story context, search and summary."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, cast

import typer

from orrery.cli.common import (
    UserOpt,
    err,
    out,
    print_scoped_json,
    project_scope,
    run,
    with_db,
)
from orrery.config import get_settings

docs_app = typer.Typer(
    help="Document index: chunk PRD, OpenAPI and schema files; story context.", no_args_is_help=True
)


@docs_app.command("index")
def docs_index(
    path: Annotated[
        str | None,
        typer.Argument(
            help="The docs folder (PRD markdown, OpenAPI, Prisma/SQL/Python/zod); default: the folder "
            "indexed before, else ORRERY_DOCS_DIR."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if nothing changed.")] = False,
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Chunk a docs folder into the project's document index (replacing stale chunks)."""
    from orrery.docs.index import index_docs

    async def body(db: Any) -> Any:
        async with db.transaction() as session:
            user_id, project_id = await project_scope(session, project, user)
            return await index_docs(
                session, user_id, project_id, path, force=force, default_root=get_settings().docs_dir
            )

    result = run(lambda s: with_db(s, body))
    if as_json:
        print(json.dumps(result.as_dict()))
        return
    if result.skipped_unchanged:
        out.print("docs unchanged since the last index (use --force to rebuild)")
    out.print(
        f"{result.chunks_created} chunks: {result.stories} stories in {len(result.epics_indexed)} epics, "
        f"{result.api_endpoints_mapped} endpoints, {result.db_models_mapped} models, "
        f"{result.schemas_mapped} schemas"
    )


@docs_app.command("story")
def docs_story(
    story_id: Annotated[str, typer.Argument(help="A story id such as US-001.")],
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print get_context_for_story's result (JSON)."""
    from orrery.docs.index import get_context_for_story

    print_scoped_json(project, user, lambda s, u, p: get_context_for_story(s, u, p, story_id))


@docs_app.command("search")
def docs_search(
    keywords: Annotated[list[str], typer.Argument(help="Keywords.")],
    scope: Annotated[str, typer.Option(help="stories, specs or all.")] = "all",
    limit: Annotated[int, typer.Option(help="At most this many.")] = 5,
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print search_context's result (JSON)."""
    from orrery.docs.index import search_context

    if scope not in ("stories", "specs", "all"):
        err.print("[bold red]error:[/] --scope must be stories, specs or all")
        raise typer.Exit(2)
    chosen = cast(Literal["stories", "specs", "all"], scope)
    print_scoped_json(
        project, user, lambda s, u, p: search_context(s, u, p, keywords, scope=chosen, limit=limit)
    )


@docs_app.command("summary")
def docs_summary(
    project: Annotated[str | None, typer.Option("--project", help="Project id.")] = None,
    user: UserOpt = None,
) -> None:
    """Print get_context_summary's result (JSON)."""
    from orrery.docs.index import get_context_summary

    print_scoped_json(project, user, get_context_summary)


@docs_app.command("measure")
def docs_measure(
    path: Annotated[str, typer.Argument(help="A docs folder (or one PRD file).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the numbers as JSON.")] = False,
) -> None:
    """How much smaller story context is than the whole documents (seed 004 reports ~90%)."""
    import tempfile
    from dataclasses import asdict
    from pathlib import Path

    from orrery.docs.reduction import measure
    from orrery.errors import OrreryError
    from orrery.tokens import counter_for

    source = Path(path).expanduser()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if source.is_file():  # one document: measured as a folder holding only it
                (Path(tmp) / source.name).write_bytes(source.read_bytes())
                source = Path(tmp)
            result = measure(source, counter_for(get_settings().model))
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    if as_json:
        print(json.dumps(asdict(result)))
        return
    out.print(
        f"{result.stories} stories, {result.linked_specs} linked specs; whole documents "
        f"{result.whole_tokens} tokens\n"
        f"story context (tool text): {result.mean_text_tokens:.0f} tokens, "
        f"{result.reduction_text:.1%} smaller\n"
        f"story context (JSON): {result.mean_json_tokens:.0f} tokens, {result.reduction_json:.1%} smaller "
        f"(worst story {result.worst_json:.1%}); "
        f"without related stories {result.reduction_without_related:.1%}"
    )
