"""`orrery embeddings`: which messages have a vector of the configured model (`ORRERY_EMBEDDING_MODEL`)
and backfilling the rest, e.g. after switching models (relevance ignores other models' vectors)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import err, out, resolve_user, run, with_db

embeddings_app = typer.Typer(help="Embeddings for relevance: status, reembed.", no_args_is_help=True)
UserOption = Annotated[str | None, typer.Option("--user", help="Only this user's messages (email or id).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


async def _user_id(db: Any, user: str | None) -> Any:
    if user is None:
        return None
    async with db.sessions() as session:
        return (await resolve_user(session, user)).id


@embeddings_app.command("status")
def embeddings_status(user: UserOption = None, as_json: JsonOption = False) -> None:
    """Messages with a vector of the configured model, none yet, or another model's.

    Those without one are ranked lexically until their job runs or `orrery embeddings reembed`;
    embedding jobs not yet done are counted too."""
    from orrery.memory.embedding_models import embedding_model
    from orrery.memory.embedding_store import embedding_status

    async def body(db: Any, settings: Any) -> dict[str, Any]:
        model = embedding_model(settings)
        status = await embedding_status(db, model.name, await _user_id(db, user))
        return {**status.as_dict(), "remote": model.remote}

    data = run(lambda s: with_db(s, lambda db: body(db, s)))
    if as_json:
        print(json.dumps(data, indent=1))
        return
    kind = "remote: a background job embeds new messages" if data["remote"] else "local: embedded as written"
    out.print(f"model: {data['model']} ({kind})")
    out.print(f"messages with text: {data['messages']}")
    out.print(f"  with a {data['model']} vector: {data['current']}")
    out.print(f"  missing: {data['missing']}")
    for name, count in sorted(data["other_models"].items()):
        out.print(f"  with another model's vector ({name}): {count}")
    jobs = ", ".join(f"{n} {s}" for s, n in sorted(data["jobs"].items())) or "none pending"
    out.print(f"embedding jobs: {jobs}")


@embeddings_app.command("reembed")
def embeddings_reembed(
    user: UserOption = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Recompute every vector, not only missing and other-model ones.")
    ] = False,
    batch_size: Annotated[int, typer.Option(min=1, max=2048, help="Messages per provider call.")] = 64,
    as_json: JsonOption = False,
) -> None:
    """Give messages a vector of the configured model, a batch at a time (idempotent).

    A run stopped by a provider error keeps what it stored; running it again goes on from there."""
    from orrery.memory.embedding_models import EmbeddingError, embedding_model
    from orrery.memory.embedding_store import reembed

    async def body(db: Any, settings: Any) -> dict[str, Any]:
        model = embedding_model(settings)
        stored: list[int] = [0]
        try:
            await reembed(
                db,
                model,
                everything=everything,
                user_id=await _user_id(db, user),
                batch=batch_size,
                progress=lambda n: stored.__setitem__(0, n),
            )
        except EmbeddingError as exc:
            return {"model": model.name, "stored": stored[0], "error": str(exc)}
        return {"model": model.name, "stored": stored[0], "error": None}

    data = run(lambda s: with_db(s, lambda db: body(db, s)))
    if as_json:
        print(json.dumps(data, indent=1))
    else:
        out.print(f"{data['stored']} messages embedded with {data['model']}")
    if data["error"]:
        err.print(f"[bold red]error:[/] {data['error']} (run it again to go on from here)")
        raise typer.Exit(1)
