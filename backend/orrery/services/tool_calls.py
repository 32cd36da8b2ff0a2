"""One registry tool as a call every door can make: described parameters, hints, unknown arguments
refused, and the model's retry message as a readable tool error. MCP serves these tools; the HTTP
tool route and `orrery tool` run them the same way, so each door refuses the same input alike."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from functools import cache
from types import SimpleNamespace
from typing import Annotated, Any

import pydantic

from orrery.validation import excerpt, readable, scan

if typing.TYPE_CHECKING:
    from orrery.deps import TurnDeps
    from orrery.tools.registry import ToolSpec

Resolver = Callable[[], Awaitable["TurnDeps"]]


def annotations_for(spec: ToolSpec) -> Any:
    """MCP hints: read-only tools say so; writing ones say whether they overwrite and can be repeated."""
    from mcp.types import ToolAnnotations

    if spec.read_only:
        return ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=spec.destructive,
        idempotent_hint=spec.idempotent,
        open_world_hint=False,
    )


def _reject_unknown_arguments(tool: Any) -> None:
    """Unknown argument names fail the call with a tool error that lists the real ones."""
    base = tool.fn_metadata.arg_model
    known = sorted(f.alias or n for n, f in base.model_fields.items())
    takes = ", ".join(known) or "nothing"

    class Strict(base):  # type: ignore[misc,valid-type]
        @pydantic.model_validator(mode="before")
        @classmethod
        def known_only(cls, data: Any) -> Any:
            unknown = sorted(set(data) - set(known)) if isinstance(data, dict) else []
            if unknown:
                names = ", ".join(excerpt(n) for n in unknown[:10])
                raise ValueError(f"unknown argument(s) {names}; {tool.name} takes: {takes}")
            scan(data, what="arguments")  # every tool, plugins' too: no unstorable text, no deep nesting
            return data

    Strict.__name__ = Strict.__qualname__ = f"{tool.name}_arguments"
    tool.fn_metadata.arg_model = Strict
    tool.parameters = {**Strict.model_json_schema(by_alias=True), "additionalProperties": False}


def invalid_arguments(tool: str, error: pydantic.ValidationError) -> str:
    """Argument errors as every door words them (field: problem), never pydantic's report, which
    echoes the whole input."""
    return f"invalid arguments for {tool}: {readable(error.errors())}"


@cache
def _readable_tool_class() -> Any:
    """MCP's tool, whose argument errors read as `invalid arguments for T: field: problem`."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool as MCPTool

    class ReadableTool(MCPTool):
        async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
            try:
                return await super().run(arguments, context, convert_result)
            except ToolError as exc:
                if isinstance(exc.__cause__, pydantic.ValidationError):
                    raise ToolError(invalid_arguments(self.name, exc.__cause__)) from None
                raise

    return ReadableTool


def _door_annotation(returns: Any) -> Any:
    """A tool returning pydantic-ai's `ToolReturn` gives the doors an object (`door_result`)."""
    from pydantic_ai.messages import ToolReturn

    return dict[str, Any] if returns is ToolReturn else returns


def door_result(result: Any) -> Any:
    """A tool's `ToolReturn` at the doors: the text the model reads as the content, and its metadata
    (a dict: a receipt) as structured content, under `result` with that text; anything else as it is."""
    from mcp.types import CallToolResult, TextContent
    from pydantic_ai.messages import ToolReturn

    if not isinstance(result, ToolReturn):
        return result
    text = str(result.return_value)
    extra = result.metadata if isinstance(result.metadata, dict) else {}
    content = [TextContent(type="text", text=text)]
    return CallToolResult(content=content, structured_content={**extra, "result": text})


def door_text(result: Any) -> tuple[str, dict[str, Any] | None]:
    """What a door shows of a tool's answer (the text) and its structured content, if any."""
    from mcp.types import CallToolResult

    if isinstance(result, CallToolResult):
        text = "".join(getattr(c, "text", "") for c in result.content)
        return text, result.structured_content
    return (result if isinstance(result, str) else str(result)), None


def mcp_tool(spec: ToolSpec, resolve: Resolver) -> Any:
    """The registry tool as an MCP tool: every parameter described (the docstring's `Args:`, exactly
    what the agents read), read-only/destructive hints, unknown arguments refused; `resolve` says who
    is calling."""
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic_ai import ModelRetry

    from orrery.tools.registry import agent_tools

    definition = agent_tools([spec.name])[0].tool_def
    described = definition.parameters_json_schema.get("properties", {})
    fn = spec.function
    hints = typing.get_type_hints(fn, include_extras=True)
    params = [
        p.replace(
            annotation=Annotated[
                hints.get(p.name, Any), pydantic.Field(description=described[p.name]["description"])
            ]
        )
        for p in list(inspect.signature(fn).parameters.values())[1:]
    ]

    async def call(**kwargs: Any) -> Any:
        try:
            return door_result(await fn(SimpleNamespace(deps=await resolve()), **kwargs))
        except ModelRetry as exc:
            raise ToolError(str(exc)) from None

    returns = _door_annotation(hints.get("return", Any))
    call.__name__ = call.__qualname__ = spec.name
    call.__doc__ = definition.description
    call.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    tool = _readable_tool_class().from_function(
        call, name=spec.name, description=definition.description, annotations=annotations_for(spec)
    )
    _reject_unknown_arguments(tool)
    return tool
