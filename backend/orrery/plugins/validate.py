"""Check every contribution before any is registered: names, signatures, docstrings, references.

Each problem is a `PluginError` that names the plugin, where the object came from and what to fix.
"""

from __future__ import annotations

import inspect
import re
import typing
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from orrery.plugins.contributions import Candidate, Contribution, PluginError, loaded

NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
RESERVED_TOOLS = {"handoff_to_agent"}


def _fail(cand: Candidate, problem: str) -> PluginError:
    return PluginError(f"plugin {cand.plugin!r} ({cand.source}): {problem}")


def _doc(cand: Candidate, obj: Any, what: str) -> str:
    doc = inspect.getdoc(obj)
    if not doc or not doc.strip():
        raise _fail(
            cand, f"{what} has no docstring; say what it does (the model and `orrery plugins` read it)"
        )
    return doc.strip().splitlines()[0]


def _named(cand: Candidate, name: object, what: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise _fail(cand, f"{what} name {name!r} must be lower_snake_case (a-z, 0-9, _; up to 63 characters)")
    return name


def strategy(cand: Candidate) -> Contribution:
    """A class with a `name`, a docstring, a no-argument constructor and `async def select(self, ctx)`."""
    cls = cand.obj
    if not inspect.isclass(cls):
        raise _fail(cand, f"a strategy must be a class, got {type(cls).__name__}")
    name = _named(cand, getattr(cls, "name", None), "strategy")
    description = _doc(cand, cls, f"strategy class {cls.__name__}")
    select = getattr(cls, "select", None)
    if not inspect.iscoroutinefunction(select):
        raise _fail(cand, f"{cls.__name__}.select must be `async def select(self, ctx: ScopingContext)`")
    params = list(inspect.signature(select).parameters)
    if len(params) != 2:
        raise _fail(cand, f"{cls.__name__}.select takes (self, ctx), not ({', '.join(params)})")
    try:
        cls()
    except Exception as exc:
        raise _fail(cand, f"{cls.__name__}() must construct without arguments: {exc}") from None
    return Contribution(cand.plugin, "strategy", name, cand.source, description, cls)


def tool(cand: Candidate) -> Contribution:
    """An async function `(ctx: RunContext[TurnDeps], ...)` with a docstring describing every
    parameter, or a `ToolSpec` around one; plain functions are treated as writing tools."""
    from dataclasses import replace

    from pydantic_ai import RunContext, Tool

    from orrery.tools.registry import ToolSpec

    spec = cand.obj if isinstance(cand.obj, ToolSpec) else None
    fn = spec.function if spec else cand.obj
    if not inspect.iscoroutinefunction(fn):
        raise _fail(cand, "a tool must be an `async def` function (or a ToolSpec around one)")
    name = _named(cand, spec.name if spec else fn.__name__, "tool")
    if name in RESERVED_TOOLS:
        raise _fail(cand, f"tool name {name!r} is reserved")
    description = _doc(cand, fn, f"tool {name}")
    params = list(inspect.signature(fn).parameters.values())
    try:
        first = typing.get_type_hints(fn).get(params[0].name) if params else None
    except Exception as exc:
        raise _fail(cand, f"tool {name}'s annotations cannot be resolved: {exc}") from None
    if typing.get_origin(first) is not RunContext:
        raise _fail(cand, f"tool {name} must take `ctx: RunContext[TurnDeps]` as its first parameter")
    try:
        Tool(fn, takes_ctx=True, name=name, require_parameter_descriptions=True).tool_def  # noqa: B018
    except Exception as exc:
        raise _fail(cand, f"tool {name}: {exc}") from None
    final = (
        replace(spec, plugin=cand.plugin) if spec else ToolSpec(name, fn, False, "plugin", plugin=cand.plugin)
    )
    return Contribution(cand.plugin, "tool", name, cand.source, description, final)


def agent(cand: Candidate, tools: set[str], strategies: set[str]) -> Contribution:
    """An `AgentDefinition` with a prompt, routing words and only known tools and strategy."""
    from dataclasses import replace

    from orrery.roster import AgentDefinition

    found = cand.obj
    if not isinstance(found, AgentDefinition):
        raise _fail(cand, f"an agent must be a orrery.roster.AgentDefinition, got {type(found).__name__}")
    name = _named(cand, found.id, "agent")
    if not found.description.strip():
        raise _fail(cand, f"agent {name} needs a description (shown in GET /v1/agents and `orrery plugins`)")
    if not (found.prompt_text or "").strip():
        raise _fail(cand, f"agent {name} needs `prompt_text`, its base prompt")
    if not found.route_words:
        raise _fail(cand, f"agent {name} needs `route_words` so the router can pick it")
    unknown = [t for t in found.tools if t not in tools]
    if unknown:
        raise _fail(cand, f"agent {name} names unknown tools: {', '.join(unknown)}")
    if found.strategy not in strategies:
        raise _fail(cand, f"agent {name} names unknown strategy {found.strategy!r}")
    return Contribution(
        cand.plugin, "agent", name, cand.source, found.description, replace(found, plugin=cand.plugin)
    )


def expertise(cand: Candidate, agents: set[str]) -> list[Contribution]:
    """A directory of expertise modules (markdown with front matter), each for known agents."""
    from orrery.errors import ConfigurationError
    from orrery.memory.expertise import load_modules

    where = cand.obj
    if isinstance(where, str):
        where = Path(where)
    if not isinstance(where, Traversable) or not where.is_dir():
        raise _fail(cand, f"expertise must be a directory of .md modules, got {cand.obj!r}")
    directory = Path(str(where))
    try:
        modules = load_modules(directory)
    except ConfigurationError as exc:
        raise _fail(cand, str(exc)) from None
    if not modules:
        raise _fail(cand, f"expertise directory {directory} has no .md modules")
    out = []
    for module in modules:
        unknown = [a for a in module.agents if a != "*" and a not in agents]
        if unknown:
            raise _fail(cand, f"expertise module {module.slug!r} names unknown agents: {', '.join(unknown)}")
        out.append(Contribution(cand.plugin, "expertise", module.slug, cand.source, module.title, directory))
    return out


def validate_all(candidates: list[Candidate]) -> list[Contribution]:
    """Validate in dependency order (strategies and tools before the agents that name them)."""
    from orrery.memory.expertise import load_modules
    from orrery.memory.scoping import strategy_names
    from orrery.roster import AGENTS
    from orrery.tools.registry import REGISTRY

    taken: dict[tuple[str, str], str] = {("strategy", n): "Orrery" for n in strategy_names()}
    taken |= {("tool", n): "Orrery" for n in REGISTRY}
    taken |= {("agent", n): "Orrery" for n in AGENTS}
    taken |= {("expertise", m.slug): "Orrery" for m in load_modules()}
    for c in loaded():  # a dry run after startup: what plugins registered is not Orrery's own
        taken.pop((c.kind, c.name), None)
    out: list[Contribution] = []

    def claim(cand: Candidate, made: list[Contribution]) -> None:
        for c in made:
            owner = taken.get((c.kind, c.name))
            if owner is not None:
                raise _fail(cand, f"{c.kind} name {c.name!r} is already taken by {owner}")
            taken[(c.kind, c.name)] = f"plugin {cand.plugin!r}"
            out.append(c)

    by_kind = {k: [c for c in candidates if c.kind == k] for k in ("strategy", "tool", "agent", "expertise")}
    for cand in by_kind["strategy"]:
        claim(cand, [strategy(cand)])
    for cand in by_kind["tool"]:
        claim(cand, [tool(cand)])
    tools = {n for kind, n in taken if kind == "tool"}
    strategies = {n for kind, n in taken if kind == "strategy"}
    for cand in by_kind["agent"]:
        claim(cand, [agent(cand, tools, strategies)])
    agents = {n for kind, n in taken if kind == "agent"}
    for cand in by_kind["expertise"]:
        claim(cand, expertise(cand, agents))
    return out
