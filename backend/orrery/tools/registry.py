"""The one tool registry: agents, the HTTP API and the MCP server all read it.

Each entry names a plain typed async function whose docstring is the description the model reads
(parameter descriptions are required), and whether it only reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic_ai import Tool

from orrery.deps import TurnDeps
from orrery.errors import ValidationError
from orrery.ops import metrics
from orrery.tools import docs, facts, graph, knowledge, memory


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool."""

    name: str
    function: Callable[..., Any]
    read_only: bool
    group: str
    destructive: bool = False
    """A writing tool that may overwrite or remove what is there (MCP `destructiveHint`)."""
    idempotent: bool = False
    """Repeating a call with the same arguments changes nothing more (MCP `idempotentHint`)."""
    plugin: str | None = None
    """The plugin that contributed this tool (None: built in)."""


REGISTRY: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("get_linked_entities", graph.get_linked_entities, read_only=True, group="graph"),
        ToolSpec("find_entities", graph.find_entities, read_only=True, group="graph"),
        ToolSpec("build_context", graph.build_context, read_only=True, group="graph"),
        ToolSpec("load_context_for_task", knowledge.load_context_for_task, read_only=True, group="knowledge"),
        ToolSpec("get_entry", knowledge.get_entry, read_only=True, group="knowledge"),
        ToolSpec("search_knowledge", knowledge.search_knowledge, read_only=True, group="knowledge"),
        ToolSpec(
            "update_entry", knowledge.update_entry, read_only=False, group="knowledge", destructive=True
        ),
        ToolSpec("create_entry", knowledge.create_entry, read_only=False, group="knowledge"),
        ToolSpec("get_context_for_story", docs.get_context_for_story, read_only=True, group="docs"),
        ToolSpec("get_relevant_specs", docs.get_relevant_specs, read_only=True, group="docs"),
        ToolSpec("search_context", docs.search_context, read_only=True, group="docs"),
        ToolSpec("list_stories_by_epic", docs.list_stories_by_epic, read_only=True, group="docs"),
        ToolSpec("get_context_summary", docs.get_context_summary, read_only=True, group="docs"),
        ToolSpec("index_docs", docs.index_docs, read_only=False, group="docs", idempotent=True),
        ToolSpec("remember_fact", facts.remember_fact, read_only=False, group="memory"),
        ToolSpec("forget_fact", facts.forget_fact, read_only=False, group="memory", destructive=True),
        ToolSpec("search_memory", memory.search_memory, read_only=True, group="memory"),
    )
}


HANDOFF_TOOL = "handoff_to_agent"
metrics.know_tools(lambda name: name in REGISTRY or name == HANDOFF_TOOL)  # plugins' join REGISTRY


SEED_ALIASES: dict[str, tuple[str, dict[str, str]]] = {
    "chunk_docs": ("index_docs", {"force_rebuild": "force"}),
}
"""Seed 004's tool name, served at the HTTP tools door and over MCP as the tool it names (with its
argument names renamed); never listed, so agents see one tool."""


def resolve_alias(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The registry name and arguments a call by a seed's name stands for (others unchanged)."""
    if name not in SEED_ALIASES or name in REGISTRY:
        return name, arguments
    target, renamed = SEED_ALIASES[name]
    return target, {renamed.get(k, k): v for k, v in arguments.items()}


def tool_names(*, read_only: bool | None = None) -> list[str]:
    """Registered tool names, optionally only the read-only (or only the writing) ones."""
    return sorted(n for n, s in REGISTRY.items() if read_only is None or s.read_only == read_only)


def agent_tools(names: Iterable[str] | None = None) -> list[Tool[TurnDeps]]:
    """pydantic-ai tools for the given names (default: all), with strict parameter docs; each is built
    once per process and shared by every agent and turn."""
    chosen = list(names) if names is not None else tool_names()
    unknown = [n for n in chosen if n not in REGISTRY]
    if unknown:
        raise ValidationError(f"unknown tools: {', '.join(unknown)}; known: {', '.join(tool_names())}")
    return [_tool(n) for n in chosen]


@cache
def _tool(name: str) -> Tool[TurnDeps]:
    """One pydantic-ai tool, built once per process: building one derives its JSON schema from the
    signature and docstring, which cost a third of a turn when it happened every turn."""
    return Tool(
        REGISTRY[name].function, takes_ctx=True, name=name, require_parameter_descriptions=True, max_retries=2
    )
