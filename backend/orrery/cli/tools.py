"""`orrery tool NAME`: run any registry tool (built-in or plugin) from the command line, with the
same argument checks and readable errors as `POST /v1/tools/{name}` and MCP."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from orrery.cli.common import ProjectOpt, UserOpt, out, project_scope, run, with_db
from orrery.config import Settings

app = typer.Typer()


def _arguments(text: str) -> dict[str, Any]:
    from orrery.errors import ValidationError

    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"--args is not JSON: {exc.msg} (at character {exc.pos})") from None
    except RecursionError:  # the decoder recurses once per level: thousands of levels overflow it
        raise ValidationError("--args is nested too deeply to read") from None
    if not isinstance(parsed, dict):
        raise ValidationError('--args must be a JSON object, such as \'{"code": "BR-012"}\'')
    return parsed


async def run_tool(
    settings: Settings, name: str, arguments: dict[str, Any], project: str | None, user: str | None
) -> str:
    """Run `name` as the user for the project (no transaction is held while the tool runs)."""
    from orrery.deps import TurnDeps
    from orrery.errors import NotFoundError, ValidationError
    from orrery.plugins import ensure_plugins
    from orrery.services.tool_calls import door_text, mcp_tool
    from orrery.tools.registry import REGISTRY

    ensure_plugins(settings)
    if name not in REGISTRY:
        raise NotFoundError("tool", name)

    async def body(db: Any) -> str:
        from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

        async with db.readers() as session:
            user_id, project_id = await project_scope(session, project, user)
        deps = TurnDeps(db=db, user_id=user_id, settings=settings, project_id=project_id)

        async def caller() -> TurnDeps:
            return deps

        try:
            result = await mcp_tool(REGISTRY[name], caller).run(arguments, context=None)
        except UnexpectedToolError as exc:  # a crash, not the caller's mistake
            raise exc.__cause__ or exc from None
        except ToolError as exc:
            raise ValidationError(str(exc).removeprefix(f"Error executing tool {name}: ")) from None
        return door_text(result)[0]

    return await with_db(settings, body)


@app.command("tool")
def tool_command(
    name: Annotated[str, typer.Argument(help="The tool, as listed by GET /v1/tools (e.g. update_entry).")],
    args: Annotated[str, typer.Option("--args", help="The arguments as a JSON object.")] = "{}",
    project: ProjectOpt = None,
    user: UserOpt = None,
) -> None:
    """Run one tool as a user, exactly as an agent, MCP or `POST /v1/tools/NAME` would; prints its result."""
    result = run(lambda s: run_tool(s, name, _arguments(args), project, user))
    out.print(result, markup=False, highlight=False)
