"""Request ids (generated, or the client's if sane) on every response and log line; JSON logs; a
failed turn logged in full (exception chain) server-side."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from orrery.agents.orchestrator import Orchestrator
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat
from tests.support.models import streaming
from tests.support.serving import serving


async def test_request_ids_are_generated_or_kept_when_sane(api: httpx.AsyncClient) -> None:
    generated = await api.get("/v1/me")
    assert len(generated.headers["X-Request-ID"]) == 32
    assert (await api.get("/v1/me", headers={"X-Request-ID": "lb-7f3a.42"})).headers[
        "X-Request-ID"
    ] == "lb-7f3a.42"
    for insane in ("x" * 200, "two words", "<script>"):
        replaced = (await api.get("/v1/me", headers={"X-Request-ID": insane})).headers["X-Request-ID"]
        assert replaced != insane and len(replaced) == 32
    missing = await api.get("/v1/nothing-here", headers={"X-Request-ID": "abc"})
    assert missing.status_code == 404 and missing.headers["X-Request-ID"] == "abc"


async def test_json_logs_carry_the_request_id(
    settings: Settings, demo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(settings.model_copy(update={"log_format": "json"}))
    async with serving(app, demo.api_key) as api:
        response = await api.get("/v1/me", headers={"X-Request-ID": "req-json-1"})
    assert response.status_code == 200
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    access = [
        line for line in lines if line["logger"] == "orrery.http" and line["request_id"] == "req-json-1"
    ]
    assert access and access[0]["level"] == "INFO" and access[0]["status"] == 200
    assert access[0]["message"].startswith("GET /v1/me 200")


async def test_a_failed_turn_is_logged_in_full(
    db: Database, settings: Settings, demo: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        try:
            raise ConnectionRefusedError("10.0.0.7:5432 refused")
        except ConnectionRefusedError as exc:
            raise RuntimeError("provider call failed") from exc

    async with db.transaction() as s:
        session = await chat.create_session(s, demo.user_id, project_id=demo.project_id, active_agent="coach")
    orch = Orchestrator(db, settings, lambda name, s: streaming(broken))
    with caplog.at_level(logging.ERROR, logger="orrery.turns"):
        events = [e async for e in orch.turn(demo.user_id, session.id, "hello", model="scripted")]
    assert events[-1].type == "error"
    [record] = [r for r in caplog.records if r.name == "orrery.turns"]
    assert record.exc_info is not None and record.exc_info[1].__cause__ is not None
    text = caplog.text
    assert (
        "ConnectionRefusedError: 10.0.0.7:5432 refused" in text
        and "RuntimeError: provider call failed" in text
    )
    assert record.agent == "coach" and record.session_id == str(session.id)  # type: ignore[attr-defined]


async def test_every_record_is_written_once_as_json_whoever_configured_logging_first(
    settings: Settings, demo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A library calling `logging.basicConfig` (or adding its own console handler, as litellm does)
    must not make each line appear twice or in another format; tracebacks stay inside the JSON line."""
    root = logging.getLogger()
    before = list(root.handlers)
    logging.basicConfig()  # what an imported library may do
    logging.getLogger("LiteLLM").addHandler(logging.StreamHandler())
    try:
        app = create_app(settings.model_copy(update={"log_format": "json"}))
        async with serving(app, demo.api_key) as api:
            await api.get("/v1/me", headers={"X-Request-ID": "req-once"})
        logging.getLogger("LiteLLM").warning("provider retry 1 of 2")
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("orrery.turns").exception("turn failed")
        err = capsys.readouterr().err.splitlines()
    finally:
        root.handlers = before
    assert all(line.startswith("{") for line in err if line.strip()), "\n".join(err)
    lines = [json.loads(line) for line in err if line.strip()]
    access = [
        line for line in lines if line.get("request_id") == "req-once" and line["logger"] == "orrery.http"
    ]
    assert len(access) == 1
    assert [line["logger"] for line in lines if line["message"] == "provider retry 1 of 2"] == ["LiteLLM"]
    [failure] = [line for line in lines if line["message"] == "turn failed"]
    assert "ValueError: boom" in failure["exc_info"]
