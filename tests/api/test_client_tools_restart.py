"""A turn suspended on the caller's tool call is durable (issue 50): it is resumed on the other of
two server processes after both restarted, and the stored chat has the call with its result."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from orrery.demo.workspace import load_demo
from tests.ops.test_multiprocess import _in_database, servers
from tests.support.upstream import fake_provider, provider_env

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


def _script(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    offered = [t["function"]["name"] for t in body.get("tools") or []]
    if "get_weather" not in offered:  # a background job's request (the person's summary)
        return {"content": "A summary."}
    if last["role"] == "tool":
        return {"content": f"Weather: {last['content']}"}
    call = {"id": "call_w", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    return {"tool_calls": [call]}


@pytest.mark.demo_db
def test_a_suspended_turn_resumes_on_another_process_after_a_restart(db_url: str, tmp_path: Path) -> None:
    demo = _in_database(db_url, lambda database: load_demo(database, "test-secret"))
    with fake_provider() as (provider, base):
        provider.mode, provider.script = "script", _script
        env = {
            **os.environ,
            **provider_env(base, "direct"),
            "DATABASE_URL": db_url,
            "ORRERY_ENV": "test",
            "ORRERY_SECRET_KEY": "test-secret",
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        }
        asked: list[Any] = [{"role": "user", "content": "Weather here?"}]
        with servers(env, 2) as (first, _):
            client = openai.OpenAI(base_url=f"{first}/v1", api_key=demo.api_key, max_retries=0)
            suspended = client.chat.completions.create(
                model="orrery/planner", messages=asked, tools=[WEATHER]
            )
        assert suspended.choices[0].finish_reason == "tool_calls"
        call = suspended.choices[0].message.tool_calls[0]
        answered = [
            *asked,
            {"role": "assistant", "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": "rain"},
        ]
        with servers(env, 2) as (_, second):  # both processes restarted; the other one resumes
            client = openai.OpenAI(base_url=f"{second}/v1", api_key=demo.api_key, max_retries=0)
            raw = client.chat.completions.with_raw_response.create(
                model="orrery/planner", messages=answered, tools=[WEATHER]
            )
            assert raw.parse().choices[0].message.content == "Weather: rain"
            headers = {"Authorization": f"Bearer {demo.api_key}"}
            sid = raw.headers["x-orrery-session"]
            history = httpx.get(f"{second}/v1/sessions/{sid}", headers=headers).json()["messages"]
            again = client.chat.completions.create(model="orrery/planner", messages=answered, tools=[WEATHER])
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[-1]["tool_calls"][0] | {"args": {}} == {
        "id": "call_w",
        "name": "get_weather",
        "args": {},
        "client": True,
        "result": "rain",
        "error": False,
    }
    assert again.choices[0].message.content == "Weather: rain"  # a resend replays, runs nothing
    turn_requests = [r for r in provider.requests if "get_weather" in str(r.get("tools"))]
    assert len(turn_requests) == 2
