"""Each working-context section has its own budget: the knowledge packet cannot starve the linked
entities, which show 3 items per type with ids inside ~500 tokens at any window size."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.graph.linked_format import ABBREVIATED_MAX_TOKENS, HINT
from orrery.repo import chat
from orrery.tokens import counter_for
from tests.support.models import streaming

GOALS = ("Reach 500 weekly active teams", "Launch Atlas 2.0 to general availability")


async def _focused_session(db: Database, demo: Any) -> Any:
    async with db.transaction() as s:
        record = await chat.create_session(
            s, demo.user_id, project_id=demo.project_id, focus_kind="task", focus_id=demo.focus["task"]
        )
    return record.id


async def test_knowledge_packet_does_not_starve_the_linked_goals(
    db: Database, settings: Settings, demo: Any
) -> None:
    """The audit's case: a domain question first (the packet loads), then a question about the
    focused task's goals; the second prompt still lists the linked goals and the tool hint."""
    sid = await _focused_session(db, demo)
    prompts: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(next(m.instructions or "" for m in reversed(messages) if isinstance(m, ModelRequest)))
        return ModelResponse(parts=[TextPart("Noted.")])

    orchestrator = Orchestrator(db, settings, lambda name, s: streaming(respond))
    for message in ("How does overage billing work?", "What goals does this task support?"):
        events = [e async for e in orchestrator.turn(demo.user_id, sid, message, agent="planner")]
        assert events[-1].type == "done", events[-1]
    first, second = prompts
    assert "## Knowledge Context" in first and "## Context Loaded" in first
    for prompt in (first, second):
        assert "## Context Loaded" in prompt  # the packet is reused on the second turn
        assert "### Goals (2 linked)" in prompt and all(g in prompt for g in GOALS)
        assert HINT in prompt


@pytest.mark.parametrize("window", [8192, 32_768, 128_000])
async def test_linked_entities_show_three_per_type_within_500_tokens(
    db: Database, settings: Settings, window: int, demo: Any
) -> None:
    sid = await _focused_session(db, demo)
    async with db.transaction() as s:
        wc = await assemble_working_context(
            s,
            agent="planner",
            session_id=sid,
            user_id=demo.user_id,
            settings=settings.model_copy(update={"context_window": window}),
            query="How does overage billing work?",
        )
    sections = {r.title or r.name: r for r in wc.receipt.sections}
    linked, knowledge = sections["Linked Entities"], sections["Knowledge Context"]
    assert linked.tokens <= linked.budget <= 4 * settings.budget_related
    assert [i.key for i in linked.included][-1] == "hint"
    assert knowledge.name == "knowledge" and knowledge.budget >= 600 and knowledge.included
    text = wc.system_prompt.split("## Linked Entities", 1)[1]
    guide = text.split("### Plans", 1)[0]
    # seed 001: 3 per type whenever 3 exist (the relationship guide is counted apart from the ~500
    # tokens of linked items), and every entity not shown is named in the receipt
    assert "### Dependent Tasks (3 of 7 linked, 1 done)" in text and "### Documents (3 of 4 linked)" in text
    assert linked.tokens - counter_for(settings.model).count(guide) <= ABBREVIATED_MAX_TOKENS
    assert len(linked.excluded) == (7 - 3) + (4 - 3)
    assert all(i.reason == "per-type cap of 3" for i in linked.excluded)
    assert text.count(" [") >= 8  # every shown item carries its id
