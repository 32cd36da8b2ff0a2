"""The get_linked_entities tool through a pydantic-ai agent, and linked context in focused chats."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent

from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.deps import TurnDeps
from orrery.memory.messages import append_message
from orrery.repo import chat, identity
from orrery.tools.registry import agent_tools
from tests.support.models import calls


def calls_tool_once(args: dict[str, Any]) -> Any:
    """A model that calls get_linked_entities with `args`, then echoes what came back."""
    return calls("get_linked_entities", args)


async def _run(db: Database, settings: Settings, user_id: Any, args: dict[str, Any]) -> str:
    agent = Agent(calls_tool_once(args), deps_type=TurnDeps, tools=agent_tools(["get_linked_entities"]))
    result = await agent.run("what is linked?", deps=TurnDeps(db=db, user_id=user_id, settings=settings))
    return str(result.output)


async def test_tool_returns_full_details_filtered_by_kind(
    db: Database, settings: Settings, demo: Any
) -> None:
    out = await _run(
        db,
        settings,
        demo.user_id,
        {"entity_id": str(demo.focus["task"]), "entity_kind": "task", "filter_kind": "document"},
    )
    assert "## Linked Entities for: Finalize pricing page" in out
    assert "### Documents (4 total)" in out and "**Description:**" in out
    assert "### Plans" not in out and "Scratch" not in out


@pytest.mark.parametrize(
    "args",
    [
        {"entity_id": "not-a-uuid", "entity_kind": "task"},
        {"entity_id": "00000000-0000-4000-8000-000000000000", "entity_kind": "task"},
        {"entity_kind": "goal", "entity_id": "FOCUS_TASK"},  # right id, wrong kind
    ],
)
async def test_bad_ids_give_the_model_a_readable_error(
    db: Database, settings: Settings, args: dict[str, Any], demo: Any
) -> None:
    args = {k: str(demo.focus["task"]) if v == "FOCUS_TASK" else v for k, v in args.items()}
    out = await _run(db, settings, demo.user_id, args)
    assert "not found" in out and "Use an id and kind exactly as shown" in out


async def test_foreign_entities_are_not_found_for_the_tool(
    db: Database, settings: Settings, demo: Any
) -> None:
    async with db.transaction() as s:
        eve = await identity.create_user(s, "eve@example.org", "Eve")
    out = await _run(db, settings, eve.id, {"entity_id": str(demo.focus["task"]), "entity_kind": "task"})
    assert "not found" in out and "Finalize pricing page" not in out


async def _context(db: Database, settings: Settings, demo: Any, **focus: Any) -> Any:
    async with db.transaction() as s:
        c = await chat.create_session(s, demo.user_id, project_id=demo.project_id, **focus)
        await append_message(s, demo.user_id, c.id, chat.NewMessage("user", "What next?"))
        return await assemble_working_context(
            s, agent="planner", base_prompt="Plan.", session_id=c.id, user_id=demo.user_id, settings=settings
        )


async def test_linked_entities_only_for_an_entity_focus(db: Database, settings: Settings, demo: Any) -> None:
    focused = await _context(db, settings, demo, focus_kind="task", focus_id=demo.focus["task"])
    sections = {r.name: r for r in focused.receipt.sections}
    assert "## Current Focus\nYou are focused on the task **Finalize pricing page**" in focused.system_prompt
    assert "## Linked Entities" in focused.system_prompt and "get_linked_entities" in focused.system_prompt
    assert 0 < sections["related"].tokens <= sections["related"].budget <= 700  # the guide apart
    assert sections["focus"].tokens <= sections["focus"].budget
    project_only = await _context(db, settings, demo, focus_kind="project", focus_id=demo.project_id)
    assert "You are focused on the project **Atlas 2.0 Launch**" in project_only.system_prompt
    assert "## Linked Entities" not in project_only.system_prompt
    unfocused = await _context(db, settings, demo)
    assert (
        "## Current Focus" not in unfocused.system_prompt
        and "## Linked Entities" not in unfocused.system_prompt
    )


async def test_build_context_tool(db: Database, settings: Settings, demo: Any) -> None:
    agent = Agent(
        calls(
            "build_context",
            {"seeds": [str(demo.focus["task"])], "query": "legal review", "budget": 400, "format": "outline"},
        ),
        deps_type=TurnDeps,
        tools=agent_tools(),
    )
    out = str(
        (await agent.run("context?", deps=TurnDeps(db=db, user_id=demo.user_id, settings=settings))).output
    )
    assert "Context: Finalize pricing page" in out and "Legal review of pricing terms" in out
    assert "/400 tokens; left out:" in out
    bad = Agent(calls("build_context", {"seeds": ["nope"]}), deps_type=TurnDeps, tools=agent_tools())
    out = str(
        (await bad.run("context?", deps=TurnDeps(db=db, user_id=demo.user_id, settings=settings))).output
    )
    assert "not found" in out and "Seeds must be entity ids" in out


def test_registry_lists_read_only_graph_tools() -> None:
    from orrery.tools.registry import tool_names

    assert {"get_linked_entities", "build_context"} <= set(tool_names(read_only=True))
    with pytest.raises(Exception, match="unknown tools: nope"):
        agent_tools(["nope"])
