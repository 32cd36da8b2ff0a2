"""The `summary` strategy keeps a stored summary and extends it incrementally (mocked LLM)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import select

from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import SessionSummary
from orrery.memory.messages import append_message
from orrery.memory.summaries import ModelSummarizer
from orrery.repo import chat
from tests.support.factories import make_project, make_user
from tests.support.history import conversation


class ScriptedSummarizerModel:
    """A FunctionModel that records what it was asked and answers with a numbered summary."""

    def __init__(self, fail: bool = False) -> None:
        self.prompts: list[str] = []
        self.fail = fail
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = "".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        self.prompts.append(prompt)
        if self.fail:
            raise RuntimeError("provider unavailable")
        return ModelResponse(parts=[TextPart(f"SUMMARY v{len(self.prompts)}")])


async def _session_with(db: Database, turns: int) -> tuple[Any, Any]:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        c = await chat.create_session(s, user.id, project_id=project.id)
        for role, text in conversation(turns):
            await append_message(s, user.id, c.id, chat.NewMessage(role, text))
    return user.id, c.id


async def _say(db: Database, user_id: Any, session_id: Any, *texts: str) -> None:
    async with db.transaction() as s:
        for text in texts:
            await append_message(s, user_id, session_id, chat.NewMessage("user", text))


async def _assemble(db: Database, settings: Settings, user_id: Any, session_id: Any, model: Any) -> Any:
    async with db.transaction() as s:
        return await assemble_working_context(
            s,
            agent="coach",
            base_prompt="You coach.",
            session_id=session_id,
            user_id=user_id,
            settings=settings,
            scoping="summary",
            summarizer=ModelSummarizer(model.model),
        )


async def test_summary_is_stored_reused_and_extended_incrementally(db: Database, settings: Settings) -> None:
    user_id, session_id = await _session_with(db, 15)  # 30 messages
    model = ScriptedSummarizerModel()
    first = await _assemble(db, settings, user_id, session_id, model)
    keep = settings.summary_keep_recent
    assert len(model.prompts) == 1 and "Update 0:" in model.prompts[0]
    assert first.messages[0]["role"] == "system" and "SUMMARY v1" in first.messages[0]["content"]
    assert len(first.messages) == 1 + keep
    async with db.sessions() as s:
        row = (await s.execute(select(SessionSummary))).scalar_one()
    assert row.covered_through_seq == 30 - keep and row.summary == "SUMMARY v1"

    again = await _assemble(db, settings, user_id, session_id, model)
    assert len(model.prompts) == 1  # nothing new to fold: no model call
    assert any("reused" in n for n in again.receipt.notes)

    await _say(db, user_id, session_id, "New A", "New B", "New C")
    third = await _assemble(db, settings, user_id, session_id, model)
    assert len(model.prompts) == 2
    folded = model.prompts[1]
    assert "SUMMARY v1" in folded  # extends the previous summary...
    assert "Update 0:" not in folded and "Update 12:" in folded  # ...with only the newly aged messages
    assert "New C" not in folded  # the newest stay verbatim
    assert [m["content"] for m in third.messages[-3:]] == ["New A", "New B", "New C"]
    async with db.sessions() as s:
        assert (await s.execute(select(SessionSummary.covered_through_seq))).scalar_one() == 33 - keep


async def test_model_failure_falls_back_to_token_budget_and_keeps_the_old_summary(
    db: Database, settings: Settings
) -> None:
    user_id, session_id = await _session_with(db, 15)
    await _assemble(db, settings, user_id, session_id, ScriptedSummarizerModel())
    await _say(db, user_id, session_id, "one more", "and another")
    result = await _assemble(db, settings, user_id, session_id, ScriptedSummarizerModel(fail=True))
    assert result.receipt.strategy == "summary -> token_budget"
    assert any("summarizer failed" in n and "fell back to token_budget" in n for n in result.receipt.notes)
    assert result.messages[-1]["content"] == "and another"
    async with db.sessions() as s:
        assert (await s.execute(select(SessionSummary.summary))).scalar_one() == "SUMMARY v1"


@pytest.mark.parametrize("turns", [2])
async def test_short_sessions_need_no_summary(db: Database, settings: Settings, turns: int) -> None:
    user_id, session_id = await _session_with(db, turns)
    model = ScriptedSummarizerModel()
    result = await _assemble(db, settings, user_id, session_id, model)
    assert model.prompts == [] and len(result.messages) == 2 * turns
