"""Agent frameworks' structured outputs against a live server on the offline model (issue 50 §2):
an OpenAI Agents SDK agent with an `output_type` on both model classes, streamed and not, with an
agent id without a slash; LangChain's `with_structured_output` by `json_schema`, `json_mode` and
`function_calling` (the schema as a caller's tool the model is made to call: its arguments are the
answer, and the turn waits for a result nobody sends until it expires)."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from pydantic import BaseModel

from tests.api.live import LiveServer


class Plan(BaseModel):
    title: str
    steps: list[str]
    urgent: bool


@pytest.mark.parametrize("model_class", ["responses", "chat_completions"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_agents_sdk_output_type(live: LiveServer, demo: Any, model_class: str, streamed: bool) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, set_tracing_disabled

    set_tracing_disabled(True)  # no trace export to OpenAI from a test
    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    kind = OpenAIResponsesModel if model_class == "responses" else OpenAIChatCompletionsModel
    model = kind(model="orrery-planner", openai_client=client)
    agent = Agent(name="Planner", instructions="Plan in three steps.", model=model, output_type=Plan)
    if streamed:
        run = Runner.run_streamed(agent, "Plan my week of revision")
        async for _ in run.stream_events():
            pass
        output = run.final_output
    else:
        output = (await Runner.run(agent, "Plan my week of revision")).final_output
    assert isinstance(output, Plan) and output.steps


async def test_langchain_with_structured_output(live: LiveServer, demo: Any) -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="orrery/planner", base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    plan = await chat.with_structured_output(Plan, method="json_schema").ainvoke("Plan my week")
    assert isinstance(plan, Plan) and plan.title
    loose = await chat.with_structured_output(None, method="json_mode").ainvoke("Plan my day as JSON")
    assert isinstance(loose, dict) and loose["answer"]


async def test_langchain_with_structured_output_by_function_calling(live: LiveServer, demo: Any) -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="orrery/planner", base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    plan = await chat.with_structured_output(Plan, method="function_calling").ainvoke("Plan my week")
    assert isinstance(plan, Plan) and plan.title == "Plan my week"
