"""The turn's model loop on pydantic-ai's direct API behaves as an agent run would: tools called and
answered, arguments validated, `ModelRetry` and retry limits, empty answers retried, a request cap,
and a result event with the output, usage and last response."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai import AgentRunResultEvent, ModelRetry, RunContext, Tool
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    RetryFeedbackPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from orrery.agents import model_loop
from orrery.agents.model_loop import LoopSpec, run_loop


async def lookup(ctx: RunContext[str], code: str) -> str:
    """Look an entry up.

    Args:
        code: The entry's code.
    """
    if code == "bad":
        raise ModelRetry("no entry bad; try BR-1")
    return f"{ctx.deps}: entry {code}"


TOOLS = FunctionToolset([Tool(lookup, takes_ctx=True, max_retries=2)])


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    return [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []


async def _events(stream: Any) -> list[Any]:
    return [e async for e in stream]


def _spec(stream_fn: Any) -> LoopSpec[str]:
    return LoopSpec(FunctionModel(stream_function=stream_fn), TOOLS, "Be brief.", "deps-value")


async def test_a_tool_call_is_run_and_its_result_sent_back() -> None:
    seen: list[AgentInfo] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(info)
        if not _returns(messages):
            yield {0: DeltaToolCall(name="lookup", json_args='{"code": "BR-1"}', tool_call_id="c1")}
            return
        yield "Found "
        yield _returns(messages)[0].model_response_str()

    events = await _events(run_loop(_spec(stream), [], "find BR-1"))
    calls = [e for e in events if isinstance(e, FunctionToolCallEvent)]
    results = [e for e in events if isinstance(e, FunctionToolResultEvent)]
    assert [c.part.args_as_dict() for c in calls] == [{"code": "BR-1"}] and calls[0].args_valid
    assert results[0].part.content == "deps-value: entry BR-1"
    final = events[-1]
    assert isinstance(final, AgentRunResultEvent)
    assert final.result.output == "Found deps-value: entry BR-1"
    assert final.result.usage.requests == 2 and final.result.response.text == final.result.output
    assert seen[0].instructions == "Be brief." and [t.name for t in seen[0].function_tools] == ["lookup"]


async def test_model_retry_and_bad_arguments_go_back_to_the_model_until_the_tool_limit() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        returns = _returns(messages)
        if returns and returns[0].outcome == "success":
            yield "done"
            return
        attempt = sum(1 for m in messages if isinstance(m, ModelRequest) and _returns([m]))
        args = ['{"code": "bad"}', '{"nope": 1}', '{"code": "BR-1"}'][attempt]
        yield {0: DeltaToolCall(name="lookup", json_args=args, tool_call_id=f"c{attempt}")}

    events = await _events(run_loop(_spec(stream), [], "find"))
    results = [e.part for e in events if isinstance(e, FunctionToolResultEvent)]
    assert [r.outcome for r in results] == ["retried", "retried", "success"]
    assert "try BR-1" in results[0].model_response_str()
    assert [e.args_valid for e in events if isinstance(e, FunctionToolCallEvent)] == [True, False, True]
    assert events[-1].result.output == "done"


async def test_a_tool_that_keeps_failing_ends_the_run() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[DeltaToolCalls]:
        yield {0: DeltaToolCall(name="lookup", json_args='{"code": "bad"}', tool_call_id="c")}

    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries"):
        await _events(run_loop(_spec(stream), [], "find"))


async def test_an_unknown_tool_is_answered_with_the_tools_there_are() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if _returns(messages):
            yield "ok"
            return
        yield {0: DeltaToolCall(name="delete_all", json_args="{}", tool_call_id="c")}

    events = await _events(run_loop(_spec(stream), [], "go"))
    result = next(e.part for e in events if isinstance(e, FunctionToolResultEvent))
    assert result.outcome == "retried" and "lookup" in result.model_response_str()


async def test_an_empty_answer_is_asked_again_then_refused() -> None:
    answers = iter(["", "now text"])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield next(answers, "")

    events = await _events(run_loop(_spec(stream), [], "hi"))
    history = events[-1].result.all_messages()
    assert events[-1].result.output == "now text"
    assert any(isinstance(p, RetryFeedbackPart) for m in history for p in m.parts)
    with pytest.raises(UnexpectedModelBehavior, match="maximum retries .2. for output"):
        await _events(run_loop(_spec(stream), [], "hi"))


async def test_requests_per_run_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_loop, "REQUEST_LIMIT", 3)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[DeltaToolCalls]:
        call_id = f"c{len(messages)}"
        yield {0: DeltaToolCall(name="lookup", json_args='{"code": "BR-1"}', tool_call_id=call_id)}

    with pytest.raises(UsageLimitExceeded, match="request_limit of 3"):
        await _events(run_loop(_spec(stream), [], "loop forever"))


async def test_an_agents_tools_are_listed_once_unless_a_tool_prepares_its_definition() -> None:
    from dataclasses import replace

    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.usage import RunUsage

    from orrery.agents.model_run import ListedOnce

    prepared: list[int] = []

    async def prepare(ctx: RunContext[str], tool_def: ToolDefinition) -> ToolDefinition:
        prepared.append(ctx.run_step)
        return tool_def

    ctx = RunContext(deps="d", model=TestModel(), usage=RunUsage())
    static = ListedOnce([Tool(lookup, takes_ctx=True)])
    first = await static.get_tools(ctx)
    assert await static.get_tools(ctx) == first and static._listed is not None  # noqa: SLF001
    dynamic = ListedOnce([Tool(lookup, takes_ctx=True, prepare=prepare)])
    for step in (1, 2):
        await dynamic.get_tools(replace(ctx, run_step=step))
    assert prepared == [1, 2] and dynamic._listed is None  # noqa: SLF001


async def test_a_request_carries_the_listed_tools_unchanged_without_return_schemas() -> None:
    from pydantic_ai.models import ModelRequestParameters, prepare_return_schemas
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from orrery.agents.model_run import toolset_for

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    listed = await toolset_for(("search_knowledge", "get_entry"), ("coach",)).get_tools(ctx)  # type: ignore[arg-type]
    definitions = [tool.tool_def for tool in listed.values()]
    assert definitions and all(d.return_schema is None for d in definitions)
    params = ModelRequestParameters(function_tools=definitions)
    # what pydantic-ai does to every request: nothing left to copy
    assert prepare_return_schemas(params, supports_tool_return_schema=False) is params
