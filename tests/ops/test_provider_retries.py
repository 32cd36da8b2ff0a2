"""Provider retries are visible: each retry of a failing provider call is a `gen_ai.retry` event (the
attempt and the error) on the model-request span, and the provider is called exactly as often as
litellm's own retries called it (1 + `num_retries`), through either client of an `openai/...` model."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai.models import Model

from orrery.agents.orchestrator import Orchestrator
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.ops.tracing import setup_tracing, shutdown_tracing
from orrery.repo import chat
from tests.support.upstream import CLIENTS, client_model, fake_provider


@pytest.mark.parametrize("client", CLIENTS)
async def test_each_provider_retry_is_an_event_on_the_model_span(
    settings: Settings, db: Database, demo: Any, client: str
) -> None:
    exporter = InMemorySpanExporter()
    app = create_app(settings)
    setup_tracing(app, settings, exporter=exporter)
    with fake_provider() as (provider, base):
        provider.mode = "fail"  # HTTP 500 on every call

        def model(_name: str, _settings: Settings) -> Model:
            return client_model(client, "openai/fake-model", base, num_retries=2)

        try:
            async with db.transaction() as s:
                session = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
            turn = Orchestrator(db, settings, model).turn(demo.user_id, session.id, "hello", model="fake")
            events = [e async for e in turn]
            spans = exporter.get_finished_spans()
        finally:
            shutdown_tracing(app)
        calls = len(provider.requests)
    assert events[-1].type == "error"
    retried = [(s, e) for s in spans for e in s.events if e.name == "gen_ai.retry"]
    attempts = [(e.attributes or {}).get("gen_ai.retry.attempt") for _, e in retried]
    assert (attempts, calls) == ([1, 2], 3)  # litellm with num_retries=2 also made 3 calls
    for span, event in retried:
        assert span.name.startswith("chat"), span.name  # the model-request span
        assert (event.attributes or {}).get("error.type") == "InternalServerError"
