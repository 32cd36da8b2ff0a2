"""The offline model answers the README's suggested questions from the tool results."""

from __future__ import annotations

from typing import Any

from orrery.agents.offline_answers import answer_links, parse_links
from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat


async def _ask(db: Database, orch: Orchestrator, demo: Any, text: str) -> tuple[str, list[str]]:
    async with db.transaction() as s:
        sid = (
            await chat.create_session(
                s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"]
            )
        ).id
    events = [e async for e in orch.turn(demo.user_id, sid, text)]
    assert events[-1].type == "done", events[-1].data
    return events[-1].data["reply"], [e.data["name"] for e in events if e.type == "tool_call"]


async def test_suggested_questions_get_answers_not_dumps(db: Database, settings: Settings, demo: Any) -> None:
    orch = Orchestrator(db, settings)
    blockers, calls = await _ask(db, orch, demo, "What is this task blocked by?")
    assert calls == ["get_linked_entities"]
    assert "Legal review of pricing terms" in blockers and "Write launch email" not in blockers
    assert "not finished" in blockers and len(blockers.splitlines()) < 15
    waiting, _ = await _ask(db, orch, demo, "What does this task block?")
    assert "Write launch email" in waiting and "Legal review of pricing terms" not in waiting
    billing, calls = await _ask(db, orch, demo, "How does overage billing work?")
    assert calls[-1] == "get_entry" and "BR-012: Usage overage billing" in billing
    assert "> Usage above the tier allowance is billed per 1,000 events" in billing
    vague, calls = await _ask(db, orch, demo, "What about the seat thing?")
    # seed 000: a low-confidence packet of the loose matches is in the prompt, so no tool is needed
    assert calls == [] and "Is it one of these?" in vague and "BR-015" in vague
    tired, calls = await _ask(db, orch, demo, "I'm exhausted and losing motivation on the pricing work")
    assert calls == [] and "DR-005" not in tired and "nothing in Orrery's context" in tired


def test_links_answer_is_direction_aware_and_says_when_there_is_nothing() -> None:
    full = """## Linked Entities for: A [00000000-0000-0000-0000-000000000001]

### Dependent Tasks (2 total)

#### B [00000000-0000-0000-0000-000000000002]

- **State:** todo
- **Relationship:** depends_on (outgoing)

#### C [00000000-0000-0000-0000-000000000003]

- **State:** done
- **Relationship:** depends_on (incoming)
"""
    links = parse_links(full)
    assert [(x.name, x.direction) for x in links] == [("B", "outgoing"), ("C", "incoming")]
    assert "**B**" in answer_links("What blocks this?", "the task **A**", links)
    assert "**C**" not in answer_links("What blocks this?", "the task **A**", links)
    assert "**C**" in answer_links("Which tasks depend on this?", "the task **A**", links)
    assert answer_links("What goals does it support?", "the task **A**", links) == (
        "The task **A** has no linked goals."
    )
    assert answer_links("What is it blocked by?", "the task **A**", links[1:]).startswith("Nothing blocks")


async def test_an_explicit_load_context_request_mid_chat_runs_the_tool(
    db: Database, settings: Settings, demo: Any
) -> None:
    """Seed 000's skill triggers ("load context", "get context"): asked later in a chat that already
    holds a packet, the tool still runs and its best entry answers."""
    orch = Orchestrator(db, settings)
    async with db.transaction() as s:
        sid = (await chat.create_session(s, demo.user_id, project_id=demo.project_id)).id

    async def say(text: str) -> tuple[str, list[str]]:
        events = [e async for e in orch.turn(demo.user_id, sid, text)]
        assert events[-1].type == "done", events[-1].data
        return events[-1].data["reply"], [e.data["name"] for e in events if e.type == "tool_call"]

    await say("How does overage billing work?")  # loads the packet for the session
    reply, calls = await say("Load context for the seat minimum rule")
    assert calls == ["load_context_for_task", "get_entry"] and "BR-015: Workspace seat minimum" in reply
    reply, calls = await say("get context on shared billing")
    assert calls[0] == "load_context_for_task" and "FT-008: Shared billing" in reply


async def test_more_about_the_linked_documents_reads_the_tool(
    db: Database, settings: Settings, demo: Any
) -> None:
    """Seed 001's manual QA: "tell me more about the linked documents" uses `get_linked_entities`, so
    the documents the abbreviated section cut are named too."""
    reply, calls = await _ask(db, Orchestrator(db, settings), demo, "Tell me more about the linked documents")
    assert calls == ["get_linked_entities"]
    for name in ("Pricing research summary", "Team workspaces PRD", "Atlas 2.0 launch brief", "Sales FAQ"):
        assert f"**{name}**" in reply


async def test_the_offline_stream_matches_what_a_function_model_would_stream() -> None:
    """The offline model streams its decided reply itself; a `FunctionModel` over the same decision
    gives the same events, response and usage (the stream was only made cheaper)."""
    from collections.abc import AsyncIterator

    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from orrery.agents import offline, offline_stream

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for item in offline_stream._pieces(offline._decide(messages, info)):  # noqa: SLF001
            yield item

    request = [ModelRequest([UserPromptPart("How does overage billing work? Tell me.")], instructions="Hi.")]
    seen = []
    for model in (offline.offline_model(), FunctionModel(offline._decide, stream_function=stream)):  # noqa: SLF001
        params = ModelRequestParameters(allow_text_output=True)
        async with model_request_stream(model, request, model_request_parameters=params) as response:
            events = [repr(getattr(e, "delta", getattr(e, "part", e))) async for e in response]
            done = response.get()
        seen.append((events, done.parts, done.usage))
    assert len(seen[0][0]) > 10 and seen[0] == seen[1]
