"""`/metrics` after real turns: turns, latencies, tokens, tool calls and errors, labelled per agent."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat
from tests.ops.conftest import focused_session
from tests.support.models import streaming


async def scrape(api: httpx.AsyncClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = await api.get("/metrics", headers={"Authorization": ""})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def delta(before: dict[Any, float], after: dict[Any, float], name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_metrics_count_real_turns_per_agent(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    sid = await focused_session(api, demo)
    before = await scrape(api)
    for question in ("What is this task blocked by?", "And what plan is it in?"):
        response = await api.post(
            f"/v1/sessions/{sid}/messages", json={"content": question}, headers={"Accept": "application/json"}
        )
        assert response.status_code == 200, response.text

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("provider exploded")

    failing = Orchestrator(db, settings, lambda name, s: streaming(broken))
    async with db.transaction() as s:
        other = await chat.create_session(s, demo.user_id, project_id=demo.project_id, active_agent="coach")
    events = [e async for e in failing.turn(demo.user_id, other.id, "hello", model="scripted")]
    assert events[-1].type == "error"
    after = await scrape(api)

    assert delta(before, after, "orrery_turns_total", agent="planner", outcome="ok") == 2
    assert delta(before, after, "orrery_turn_seconds_count", agent="planner") == 2
    assert delta(before, after, "orrery_turn_seconds_sum", agent="planner") > 0
    assert delta(before, after, "orrery_model_seconds_count", agent="planner") >= 2  # tool calls add requests
    assert delta(before, after, "orrery_tokens_total", agent="planner", direction="in") > 0
    assert delta(before, after, "orrery_tokens_total", agent="planner", direction="out") > 0
    tool_calls = sum(
        v - before.get(k, 0.0)
        for k, v in after.items()
        if k[0] == "orrery_tool_calls_total" and ("agent", "planner") in k[1] and ("outcome", "ok") in k[1]
    )
    assert tool_calls >= 1
    assert delta(before, after, "orrery_errors_total", agent="coach", kind="RuntimeError") == 1
    assert delta(before, after, "orrery_turns_total", agent="coach", outcome="error") == 1


async def test_metrics_speak_openmetrics_when_asked_and_keep_no_created_series(
    api: httpx.AsyncClient,
) -> None:
    """A scraper asking for OpenMetrics (Prometheus does, first) gets it; neither format carries a
    `_created` series beside each counter and histogram (they doubled the series count)."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics

    asked = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    response = await api.get("/metrics", headers={"Authorization": "", "Accept": asked})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")
    families = list(openmetrics(response.text))  # parses as OpenMetrics
    assert any(f.name == "orrery_turns" for f in families)
    plain = await api.get("/metrics", headers={"Authorization": ""})
    assert plain.headers["content-type"].startswith("text/plain")
    for body in (response.text, plain.text):
        assert "_created" not in body


async def test_a_tool_name_the_model_invented_is_counted_as_unknown(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    from tests.support.models import calls

    async with db.transaction() as s:
        session = await chat.create_session(s, demo.user_id, project_id=demo.project_id, active_agent="coach")
    before = await scrape(api)
    for invented in ("made_up_tool_1", "made_up_tool_2"):
        model = calls(invented, {})
        inventing = Orchestrator(db, settings, lambda name, s, m=model: streaming(m.function))
        events = [
            e async for e in inventing.turn(demo.user_id, session.id, f"use {invented}", model="scripted")
        ]
        assert events[-1].type == "done"
    after = await scrape(api)
    assert (
        delta(before, after, "orrery_tool_calls_total", agent="coach", tool="_unknown", outcome="error") == 2
    )
    assert not [k for k in after if k[0] == "orrery_tool_calls_total" and ("tool", "made_up_tool_1") in k[1]]
