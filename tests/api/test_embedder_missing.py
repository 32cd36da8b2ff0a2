"""Should the shipped embedding model be missing (a damaged install), the server says so once at
start, `/health` reports `embeddings: unavailable`, and a turn's receipt notes that relevance ran
lexical-only; turns still answer. With the model present, `/health` reports it available."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.memory import embeddings, minilm
from tests.ops.conftest import focused_session, sse_events
from tests.support.serving import serving


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(minilm, "BUNDLED", tmp_path)  # an install without the model's files
    embeddings.load_embedder.cache_clear()
    yield
    embeddings.load_embedder.cache_clear()  # the next test loads the real one again


async def test_a_missing_model_is_one_warning_unavailable_on_health_and_noted(
    settings: Settings, demo: Any, no_model: None, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings)
    with caplog.at_level("WARNING", logger="orrery.memory.embeddings"):
        async with serving(app, demo.api_key) as api:
            await app.state.embedder  # the warm-up at start found no model
            health = (await api.get("/health", headers={"Authorization": ""})).json()
            sid = await focused_session(api, demo)
            for question in ("What blocks this task?", "And who owns it?"):  # the second one has history
                turn = await api.post(f"/v1/sessions/{sid}/messages", json={"content": question})
    assert health["embeddings"] == "unavailable"
    [warning] = [r for r in caplog.records if r.name == "orrery.memory.embeddings"]
    assert warning.getMessage() == embeddings.MISSING and "lexical-only" in warning.getMessage()
    events = dict(sse_events(turn.text))
    assert "done" in events
    notes = events["context"]["receipt"]["notes"]
    assert "embeddings: all-MiniLM-L6-v2 is not available; relevance runs lexical-only" in notes


async def test_health_reports_the_shipped_model_available(api: Any) -> None:
    assert (await api.get("/health")).json()["embeddings"] == "available"
