"""An orchestrator for tests: an injectable model, and every turn's context kept for assertions."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.models import Model

from orrery.agents.orchestrator import Orchestrator, TurnEvent
from orrery.config import Settings
from orrery.context.working_context import ContextReceipt, WorkingContext
from orrery.db.engine import Database


@dataclass
class TurnOutcome:
    """One turn, collected: the reply, the agent, the tool calls and the context the model got."""

    reply: str
    agent: str | None
    tool_calls: list[dict[str, Any]]
    """Each call of the turn as stored: `{"id", "name", "args", "result", "error"}` (result truncated)."""
    context: WorkingContext | None
    events: list[TurnEvent] = field(default_factory=list)
    error: str | None = None

    @property
    def receipt(self) -> ContextReceipt:
        """The turn's context receipt (what went in, what stayed out, why)."""
        assert self.context is not None, f"the turn failed before its context was built: {self.error}"
        return self.context.receipt


class TestOrchestrator(Orchestrator):
    """`Orchestrator` whose model is `self.model` (swap it any time) and which keeps each context."""

    __test__ = False  # not a pytest test class

    def __init__(self, db: Database, settings: Settings, model: Model | str) -> None:
        self.model = model
        self.contexts: list[WorkingContext] = []
        super().__init__(db, settings, model_factory=self._model, on_context=self.contexts.append)

    def _model(self, name: str, settings: Settings) -> Any:
        return self.model

    async def start_session(
        self,
        user_id: uuid.UUID | Any,
        project_id: uuid.UUID | None = None,
        *,
        focus: tuple[str, uuid.UUID] | None = None,
        agent: str | None = None,
        strategy: str | None = None,
    ) -> uuid.UUID:
        """A new chat session (optionally focused, with an agent and a scoping strategy); `user_id`
        is an id, or the `orrery_user` fixture's user (its project is the default)."""
        from orrery.memory.scoping import get_strategy
        from orrery.repo import chat

        if not isinstance(user_id, uuid.UUID):  # the kit's user: its id and project
            project_id = project_id or getattr(user_id, "project_id", None)
            user_id = user_id.id
        async with self.db.transaction() as s:
            record = await chat.create_session(
                s,
                user_id,
                project_id=project_id,
                focus_kind=focus[0] if focus else None,
                focus_id=focus[1] if focus else None,
                active_agent=agent,
            )
            if strategy is not None:
                record.scoping_strategy = get_strategy(strategy).name
            return record.id

    async def chat(
        self, user_id: uuid.UUID, session_id: uuid.UUID, text: str, *, agent: str | None = None
    ) -> TurnOutcome:
        """Run one turn to the end and collect it."""
        before = len(self.contexts)
        events = [e async for e in self.turn(user_id, session_id, text, agent=agent)]
        done = next((e.data for e in events if e.type == "done"), {})
        failed = next((e.data for e in events if e.type == "error"), None)
        return TurnOutcome(
            reply=str(done.get("reply", "")),
            agent=done.get("agent") or next((e.data["agent"] for e in events if e.type == "agent"), None),
            tool_calls=list(done.get("tool_calls", [])),
            context=self.contexts[-1] if len(self.contexts) > before else None,
            events=events,
            error=failed["message"] if failed else None,
        )
