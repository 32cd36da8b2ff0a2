"""The model loop of a turn, on pydantic-ai's direct API: request, run the tools it calls, request again.

`Agent.iter` runs the same loop through pydantic-ai's graph, capabilities and event machinery, and
that machinery cost ~18 ms of CPU for a one-tool, ~46-delta reply (`bench.model_floor`), most of a
turn's budget. Here each step is one `model_request_stream` (the model's own stream, events passed
through untouched) and the tool calls go through pydantic-ai's `ToolManager`, so argument
validation, `ModelRetry` and per-tool retry limits behave as in an agent run; the calls of one
response run one after another (each is a short database read), each call event followed by its
result event. What a client sees is the stream of pydantic-ai events an agent run yields, ending with
an `AgentRunResultEvent`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from pydantic_ai import AgentRunResult, AgentRunResultEvent, DeferredToolRequests, RunContext
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import (
    ToolFailedError,
    ToolRetryError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage

from orrery.agents.loop_spans import agent_span, tool_span

DepsT = TypeVar("DepsT")
REQUEST_LIMIT = 50
"""Model requests one turn may make (pydantic-ai's default `UsageLimits.request_limit`)."""
NO_OUTPUT = "Please return text or call a tool."
"""What an agent run tells a model whose answer had neither (a fixed text models know as feedback)."""


@dataclass
class LoopSpec(Generic[DepsT]):
    """What stays the same across a run's steps: the model, the tools, the instructions, the deps."""

    model: Model
    toolset: AbstractToolset[DepsT]
    instructions: str
    deps: DepsT
    output_retries: int = 2
    name: str = "agent"
    """The agent's name on the run's span."""
    require_tool: bool = False
    """The first request must call a tool (the caller's `tool_choice`: `required` or a function)."""
    settings: ModelSettings | None = None
    """The caller's sampling settings and reply format (`agents.caller`), sent with every request."""


@dataclass(frozen=True)
class Resumed:
    """A suspended run to continue (`agents.client_tools`): its messages up to the response that
    called the caller's tools, and the answers to that response's calls, the caller's included."""

    messages: list[ModelMessage]
    answers: list[Any]


async def run_loop(
    spec: LoopSpec[DepsT], history: list[ModelMessage], prompt: str, resumed: Resumed | None = None
) -> AsyncIterator[AgentStreamEvent | AgentRunResultEvent[Any]]:
    """Run the model on `prompt` after `history` (or continue `resumed`); yield its events, the
    last one the run's result: its text, or `DeferredToolRequests` when the model called the
    caller's tools (the run stops there; its messages are the result's, the last one the answers
    of the server tools that ran)."""
    with agent_span(spec.name, spec.model.model_name):
        async for event in _steps(spec, history, prompt, resumed):
            yield event


async def _steps(
    spec: LoopSpec[DepsT], history: list[ModelMessage], prompt: str, resumed: Resumed | None
) -> AsyncIterator[AgentStreamEvent | AgentRunResultEvent[Any]]:
    usage = RunUsage()
    ctx = RunContext(deps=spec.deps, model=spec.model, usage=usage, prompt=prompt)
    tools = ToolManager[DepsT](spec.toolset)
    if resumed is None:
        messages: list[ModelMessage] = [*history, _request(spec, [UserPromptPart(prompt)])]
    else:
        messages = [*resumed.messages, _request(spec, resumed.answers)]
    empty_answers = 0
    while True:
        if usage.requests >= REQUEST_LIMIT:
            raise UsageLimitExceeded(f"The next request would exceed the request_limit of {REQUEST_LIMIT}")
        # a new step carries the failed tools' retry counts over, as an agent run's steps do
        tools = await tools.for_run_step(replace(ctx, run_step=usage.requests + 1))
        first = usage.requests == 0 and spec.require_tool
        params = ModelRequestParameters(function_tools=tools.tool_defs, allow_text_output=not first)
        async with model_request_stream(
            spec.model, messages, model_settings=spec.settings, model_request_parameters=params
        ) as stream:
            async for streamed in stream:
                yield streamed
            response = stream.get()
        usage.incr(response.usage)
        usage.requests += 1
        messages.append(response)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            answers: list[Any] = []
            external = [c for c in calls if _is_external(tools, c)]
            for call in calls:
                if call not in external:
                    async for tool_event in _call_tool(tools, call, answers):
                        yield tool_event
            messages.append(_request(spec, answers))
            if external:  # the caller runs these: the run stops until their results arrive
                yield AgentRunResultEvent(_result(DeferredToolRequests(calls=external), messages, usage))
                return
        elif _has_text(response) or response.finish_reason == "length":
            break
        else:
            empty_answers = _check_empty(spec, empty_answers)
            feedback = RetryFeedbackPart(NO_OUTPUT, retry=RetryInfo(cause="no_output"))
            messages.append(_request(spec, [feedback]))
    yield AgentRunResultEvent(_result(response.text or "", messages, usage))


def _is_external(tools: ToolManager[Any], call: ToolCallPart) -> bool:
    definition = tools.get_tool_def(call.tool_name)
    return definition is not None and definition.kind == "external"


def _check_empty(spec: LoopSpec[Any], empty_answers: int) -> int:
    """One more answer with neither text nor a tool call: refused past the output retries."""
    if empty_answers >= spec.output_retries:
        raise UnexpectedModelBehavior(
            f"Exceeded maximum retries ({spec.output_retries}) for output validation"
        )
    return empty_answers + 1


async def _call_tool(
    tools: ToolManager[Any], call: ToolCallPart, answers: list[Any]
) -> AsyncIterator[AgentStreamEvent]:
    """One tool call as its call and result events; its answer (the result, or the retry or failure
    the model sees) is added to `answers`."""
    validated = await tools.validate_tool_call(call)
    yield FunctionToolCallEvent(call, args_valid=validated.args_valid)
    part: ToolReturnPart
    with tool_span(call.tool_name, call.tool_call_id, call.args):
        try:
            result = await tools.execute_tool_call(validated)
            part = _returned(call, result)
        except ToolRetryError as exc:
            assert isinstance(exc.tool_retry, ToolReturnPart)  # a call's retry always answers the call
            part = exc.tool_retry
        except ToolFailedError as exc:
            part = exc.tool_failed
    answers.append(part)
    yield FunctionToolResultEvent(part)


def _returned(call: ToolCallPart, result: Any) -> ToolReturnPart:
    """A tool's result as the model reads it: a `ToolReturn` gives its value, and keeps its metadata
    (a receipt) on the part, unread by the model, as pydantic-ai's own graph does."""
    if isinstance(result, ToolReturn):
        return ToolReturnPart(
            call.tool_name, result.return_value, call.tool_call_id, metadata=result.metadata
        )
    return ToolReturnPart(call.tool_name, result, call.tool_call_id)


def _request(spec: LoopSpec[Any], parts: list[Any]) -> ModelRequest:
    return ModelRequest(parts=parts, instructions=spec.instructions)


def _has_text(response: ModelResponse) -> bool:
    return any(isinstance(p, TextPart) and p.content for p in response.parts)


def _result(output: Any, messages: list[ModelMessage], usage: RunUsage) -> AgentRunResult[Any]:
    """The run's result as an agent run would give it (output, usage, the last response)."""
    result = AgentRunResult(output)
    result._state.message_history = messages  # noqa: SLF001 - no public constructor takes them
    result._state.usage = usage  # noqa: SLF001
    return result
