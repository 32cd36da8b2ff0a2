"""Cost per assistant message from litellm's price map (null offline), summed by day and agent in
`GET /v1/me/usage` (only the caller's) and `orrery usage`."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import litellm
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import select
from typer.testing import CliRunner

from orrery.agents.orchestrator import Orchestrator
from orrery.cli import app as cli_app
from orrery.config import Settings, get_settings
from orrery.db.engine import Database
from orrery.db.models import Message
from orrery.demo import content
from orrery.repo import chat, identity
from tests.conftest import in_thread
from tests.ops.conftest import focused_session
from tests.support.models import streaming

PRICED = "openai/gpt-4o-mini"
DEMO_EMAIL = content.USER["email"]


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("Here is the next step.")])


def planner_today(usage: dict[str, Any]) -> dict[str, Any]:
    today = datetime.now(UTC).date().isoformat()
    rows = [r for r in usage["usage"] if r["day"] == today and r["agent"] == "planner"]
    return rows[0] if rows else {"turns": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}


async def test_priced_model_stores_its_cost_and_offline_stores_null(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    before = planner_today((await api.get("/v1/me/usage")).json())
    assert before["cost_usd"] is None  # the demo history has no priced replies
    sid = await focused_session(api, demo)
    offline = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": "What next?"}, headers={"Accept": "application/json"}
    )
    assert offline.status_code == 200
    # A priced model id, answered by a scripted model (no provider is called).
    orch = Orchestrator(db, settings, lambda name, s: streaming(reply, PRICED))
    done = [e async for e in orch.turn(demo.user_id, sid, "And after that?", model=PRICED)][-1]
    assert done.type == "done"
    async with db.sessions() as s:
        query = select(Message).where(Message.session_id == uuid.UUID(sid), Message.role == "assistant")
        rows = (await s.execute(query.order_by(Message.seq))).scalars().all()
    assert rows[0].cost_usd is None
    priced = rows[1]
    prompt_cost, completion_cost = litellm.cost_per_token(
        model=PRICED, prompt_tokens=priced.prompt_tokens, completion_tokens=priced.completion_tokens
    )
    assert priced.cost_usd == pytest.approx(prompt_cost + completion_cost) and priced.cost_usd > 0

    usage = (await api.get("/v1/me/usage")).json()
    after = planner_today(usage)
    assert after["turns"] - before["turns"] == 2
    assert after["input_tokens"] - before["input_tokens"] == sum(m.prompt_tokens or 0 for m in rows)
    assert after["output_tokens"] - before["output_tokens"] == sum(m.completion_tokens or 0 for m in rows)
    assert after["cost_usd"] == pytest.approx(priced.cost_usd)
    assert usage["total"]["cost_usd"] == pytest.approx(priced.cost_usd)
    assert usage["total"]["turns"] == sum(r["turns"] for r in usage["usage"])


async def test_usage_is_scoped_to_the_caller(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    before = (await api.get("/v1/me/usage", params={"days": 7})).json()
    async with db.transaction() as s:
        stranger = await identity.create_user(s, "stranger@example.org", "Stranger")
        theirs = await chat.create_session(s, stranger.id)
    orch = Orchestrator(db, settings, lambda name, s: streaming(reply, PRICED))
    assert [e async for e in orch.turn(stranger.id, theirs.id, "hi", model=PRICED)][-1].type == "done"
    after = (await api.get("/v1/me/usage", params={"days": 7})).json()
    assert after == before and after["total"]["cost_usd"] is None  # the stranger's priced turn is not mine
    assert (await api.get("/v1/me/usage", params={"days": 0})).status_code == 422


async def test_cli_usage_table_and_json(
    demo: Any, db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with db.transaction() as s:
        session = await chat.create_session(s, demo.user_id, project_id=demo.project_id, active_agent="coach")
    orch = Orchestrator(db, settings, lambda name, s: streaming(reply, PRICED))
    assert [e async for e in orch.turn(demo.user_id, session.id, "hi", model=PRICED)][-1].type == "done"
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        result = in_thread(runner.invoke, cli_app, ["usage", "--email", DEMO_EMAIL, "--json"])
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        coach = [r for r in rows if r["agent"] == "coach"]
        assert [r["turns"] for r in coach] == [1] and coach[0]["cost_usd"] > 0
        table = in_thread(runner.invoke, cli_app, ["usage", "--email", DEMO_EMAIL])
        assert table.exit_code == 0 and "coach" in table.output
        missing = in_thread(runner.invoke, cli_app, ["usage", "--email", "nobody@example.org"])
        assert missing.exit_code == 1 and "not found" in missing.output
    finally:
        get_settings.cache_clear()
