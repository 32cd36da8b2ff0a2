"""The spans an agent run had, for the turn's own model loop: `invoke_agent NAME` around the run and
`execute_tool NAME` around each tool call (the `chat MODEL` spans come from pydantic-ai's instrumented
model, which the direct API applies). Off unless `Agent.instrument_all` was called (`ops.tracing`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.trace import Status, StatusCode
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings


def _settings() -> InstrumentationSettings | None:
    """The process's instrumentation (what `Agent.instrument_all` set, as the direct API reads it)."""
    setting = Agent._instrument_default  # noqa: SLF001 - where `instrument_all` keeps it
    if setting is True:
        return InstrumentationSettings()
    return setting or None


@contextmanager
def _span(settings: InstrumentationSettings | None, name: str, attributes: dict[str, Any]) -> Iterator[None]:
    """A span named `name` when tracing is on (`settings`), its status an error if the block raises."""
    if settings is None:
        yield
        return
    with settings.tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.set_attribute("error.type", f"{type(exc).__module__}.{type(exc).__qualname__}")
            raise


def agent_span(agent: str, model: str) -> Any:
    """The run's span, `invoke_agent AGENT`, naming the model and its provider (`model` is a litellm
    id, `openai/gpt-4o-mini`, or `offline`: Orrery's own)."""
    settings = _settings()
    if settings is None:
        return _span(None, "", {})
    from orrery.ops.span_conventions import provider_of  # the OpenTelemetry SDK: only when tracing

    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.request.model": model,
        "gen_ai.provider.name": provider_of(model),
    }
    return _span(settings, f"invoke_agent {agent}", attributes)


def tool_span(tool: str, call_id: str, args: Any) -> Any:
    """One tool call's span, `execute_tool TOOL` (its arguments only when content is traced)."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
    }
    settings = _settings()
    if settings is not None and settings.include_content:
        attributes["gen_ai.tool.call.arguments"] = args if isinstance(args, str) else json.dumps(args)
    return _span(settings, f"execute_tool {tool}", attributes)
