"""A context view summarises with the turns' own summarizer: built once per process and model, not
on every `GET /context` (a real model's client costs CPU to build, and its first build imports the
provider's SDK)."""

from __future__ import annotations

from typing import Any

import pytest

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.memory import summaries
from orrery.repo import chat
from orrery.services import context_view


async def test_next_context_uses_the_turns_summarizer(
    db: Database, settings: Settings, demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    orchestrator = Orchestrator(db, settings.model_copy(update={"model": "openai/fake-model"}))
    summarizer = orchestrator.summarizer()
    assert summarizer is not None and orchestrator.summarizer() is summarizer  # built once

    def no_new_summarizer(*_args: Any) -> None:
        raise AssertionError("a context view built its own summarizer")

    monkeypatch.setattr(summaries, "ModelSummarizer", no_new_summarizer)
    async with db.transaction() as s:
        session = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
    async with db.sessions() as s:
        view = await context_view.next_context(s, orchestrator, demo.user_id, str(session.id))
    assert "messages" in view and "system_prompt" in view


async def test_the_terminals_context_command_uses_the_chats_summarizer(
    db: Database, settings: Settings, demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/context` in `orrery chat` previews with the chat's orchestrator: no model built per command."""
    from rich.console import Console

    from orrery.cli.terminal import ChatTarget, _show_next_context

    orchestrator = Orchestrator(db, settings.model_copy(update={"model": "openai/fake-model"}))
    assert orchestrator.summarizer() is not None  # built once, before the command

    def no_new_summarizer(*_args: Any) -> None:
        raise AssertionError("/context built its own summarizer")

    monkeypatch.setattr(summaries, "ModelSummarizer", no_new_summarizer)
    async with db.transaction() as s:
        session = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
    console = Console(record=True, width=120)
    await _show_next_context(orchestrator, ChatTarget(demo.user_id, session.id), None, console)
    assert "system" in console.export_text().lower()
