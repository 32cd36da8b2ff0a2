"""Structured outputs, the caller's instructions and sampling settings on the OpenAI doors (issue 50
§2), and replies that say what happened (§3), driven by the real `openai` SDK against a live server:
`chat.completions.parse` and `responses.parse` on the offline model, a reply cut at `max_tokens`,
server-run tools as `mcp_call` items, a schema a reply breaks, and the caller's instructions quoted as
a section of the working context with its receipt line."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from pydantic import BaseModel

from orrery.context.working_context import WorkingContext
from tests.api.live import LiveServer
from tests.support.models import calls, streaming


class Plan(BaseModel):
    """The structured reply the caller asks for."""

    title: str
    steps: list[str]
    urgent: bool


def _client(live: LiveServer, demo: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)


async def test_chat_completions_parse_gives_the_schema_object(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    messages: Any = [{"role": "user", "content": "Plan my week of studying"}]
    parsed = await client.chat.completions.parse(
        model="orrery/planner", messages=messages, response_format=Plan
    )
    plan = parsed.choices[0].message.parsed
    assert isinstance(plan, Plan) and plan.title and plan.steps
    as_object = await client.chat.completions.create(
        model="orrery", messages=messages, response_format={"type": "json_object"}
    )
    assert as_object.choices[0].message.content.startswith("{")  # type: ignore[union-attr]
    streamed = client.chat.completions.stream(model="orrery/planner", messages=messages, response_format=Plan)
    async with streamed as stream:
        final = await stream.get_final_completion()
    assert isinstance(final.choices[0].message.parsed, Plan)


async def test_responses_parse_gives_the_schema_object(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    parsed = await client.responses.parse(model="orrery/planner", input="Plan my week", text_format=Plan)
    assert isinstance(parsed.output_parsed, Plan) and parsed.output_parsed.steps
    async with client.responses.stream(model="orrery/planner", input="Plan my day", text_format=Plan) as s:
        final = await s.get_final_response()
    assert isinstance(final.output_parsed, Plan)


async def test_a_malformed_schema_is_a_400_naming_it(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    bad: Any = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nonsense"}}}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model="orrery", messages=[{"role": "user", "content": "hi"}], response_format=bad
        )
    assert caught.value.param == "response_format.json_schema" and "valid JSON schema" in caught.value.message
    with pytest.raises(openai.BadRequestError) as flat:
        await client.responses.create(model="orrery", input="hi", text={"format": {"type": "yaml"}})  # type: ignore[typeddict-item]
    assert flat.value.param == "text.format"


async def test_a_reply_that_breaks_the_schema_is_a_clear_error(live: LiveServer, demo: Any) -> None:
    live.app.state.orchestrator.model_factory = lambda _n, _s: streaming(calls("nothing", {}).function)

    def plain_text(_name: str, _settings: Any) -> Any:
        from pydantic_ai.messages import ModelResponse, TextPart

        return streaming(lambda _m, _i: ModelResponse(parts=[TextPart("not json at all")]))

    live.app.state.orchestrator.model_factory = plain_text
    client = _client(live, demo)
    with pytest.raises(openai.APIStatusError) as caught:
        await client.chat.completions.parse(
            model="orrery", messages=[{"role": "user", "content": "Plan it"}], response_format=Plan
        )
    assert caught.value.status_code == 502 and caught.value.code == "invalid_output"
    assert "not JSON" in caught.value.message
    events = await client.responses.create(
        model="orrery", input="Plan it again", stream=True, text={"format": _format()}
    )
    seen = [e async for e in events]
    assert seen[-1].type == "response.failed" and seen[-1].response.error is not None
    assert seen[-1].response.error.code == "invalid_output"  # type: ignore[comparison-overlap]


def _format() -> Any:
    return {"type": "json_schema", "name": "plan", "schema": Plan.model_json_schema(), "strict": False}


async def test_a_reply_cut_at_max_tokens_says_length(live: LiveServer, demo: Any) -> None:
    client = _client(live, demo)
    messages: Any = [{"role": "user", "content": "Plan my week of studying for the exam"}]
    cut = await client.chat.completions.create(model="orrery/planner", messages=messages, max_tokens=3)
    assert cut.choices[0].finish_reason == "length" and len(cut.choices[0].message.content.split()) <= 3  # type: ignore[union-attr]
    chunks = await client.chat.completions.create(
        model="orrery/planner",
        messages=[{"role": "user", "content": "Plan my month"}],
        max_tokens=3,
        stream=True,
    )
    reasons = [c.choices[0].finish_reason async for c in chunks if c.choices]
    assert reasons[-1] == "length"
    whole = await client.chat.completions.create(
        model="orrery/planner", messages=[{"role": "user", "content": "Plan my year"}]
    )
    assert whole.choices[0].finish_reason == "stop"
    response = await client.responses.create(
        model="orrery/planner", input="Plan my weekend", max_output_tokens=3
    )
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    events = await client.responses.create(
        model="orrery/planner", input="Plan my evening", max_output_tokens=3, stream=True
    )
    last = [e async for e in events][-1]
    assert last.type == "response.incomplete" and last.response.status == "incomplete"


async def test_server_tools_are_mcp_call_items(live: LiveServer, demo: Any) -> None:
    model = calls("get_entry", {"code": "NOPE-999"})
    live.app.state.orchestrator.model_factory = lambda _n, _s: streaming(model.function)
    client = _client(live, demo)
    response = await client.responses.create(model="orrery/planner", input="Read NOPE-999")
    kinds = [item.type for item in response.output]
    assert kinds == ["mcp_call", "message"], kinds
    call = response.output[0]
    assert call.type == "mcp_call" and call.name == "get_entry" and "NOPE-999" in call.arguments
    assert call.server_label == "orrery" and (call.output or call.error)
    events = await client.responses.create(model="orrery/planner", input="Read NOPE-998", stream=True)
    seen = [e async for e in events]
    final = seen[-1]
    assert final.type == "response.completed"
    assert [item.type for item in final.response.output] == ["mcp_call", "message"]
    assert final.response.output_text.startswith("TOOL SAID")


async def test_the_callers_instructions_are_a_quoted_section_with_a_receipt_line(
    live: LiveServer, demo: Any
) -> None:
    seen: list[WorkingContext] = []
    live.app.state.orchestrator.on_context = seen.append
    client = _client(live, demo)
    messages: Any = [
        {"role": "system", "content": "# Always answer in French"},
        {"role": "developer", "content": "Keep it short."},
        {"role": "user", "content": "Plan my week"},
    ]
    await client.chat.completions.create(model="orrery/planner", messages=messages, temperature=0.3)
    prompt = seen[-1].system_prompt
    assert "## The caller's instructions" in prompt
    assert "\\# Always answer in French" in prompt and "Keep it short." in prompt  # quoted as data
    section = next(r for r in seen[-1].receipt.sections if r.name == "caller")
    assert [i.key for i in section.included] == ["system 1", "developer 2"]
    await client.responses.create(model="orrery/planner", input="Plan my day", instructions="Be terse.")
    assert "- instructions: Be terse." in seen[-1].system_prompt
    await client.responses.create(model="orrery/planner", input="Plan my night")
    assert "The caller's instructions" not in seen[-1].system_prompt


async def test_streams_are_not_cached_or_buffered_and_bad_json_names_the_body(
    live: LiveServer, demo: Any
) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {demo.api_key}"}
    async with httpx.AsyncClient(base_url=live.base_url, headers=headers, timeout=60) as http:
        for path, body in (
            (
                "/chat/completions",
                {"model": "orrery", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
            ),
            ("/responses", {"model": "planner", "stream": True, "input": "hello there"}),
        ):
            streamed = await http.post(path, json=body)
            assert streamed.headers["cache-control"] == "no-cache", path
            assert streamed.headers["x-accel-buffering"] == "no", path
        broken = await http.post(
            "/chat/completions", content=b'{"model": "orrery",', headers={"Content-Type": "application/json"}
        )
    error = broken.json()["error"]
    assert broken.status_code == 400 and error["param"] == "body" and error["code"] == "invalid_json"
    assert "not valid JSON" in error["message"]
