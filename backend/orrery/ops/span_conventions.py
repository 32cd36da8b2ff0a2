"""What leaves the process in a span follows the OpenTelemetry semantic conventions.

Every exporter (OTLP, or a test's in-memory one) is wrapped in `ConventionalExporter`, which rewrites
each finished span's attributes once, as it is exported:

- pydantic-ai's own attributes that no convention names (`model_request_parameters`, `logfire.*`,
  `model_name`, `agent_name`) are dropped: they are large (every tool's schema) and a collector
  cannot read them;
- an `invoke_agent` span names its model and provider (`gen_ai.request.model`,
  `gen_ai.provider.name`: the prefix of a litellm id, `openai/gpt-4o-mini` -> `openai`);
- a model request's span on Orrery's offline model names the provider `orrery` (pydantic-ai says
  `function`), and `gen_ai.tool.definitions` (every tool's schema, ~14 KB a span) leaves only when
  content is traced (`ORRERY_TRACE_CONTENT`);
- a failed span carries `error.type`, the exception's class from its `exception` event.

HTTP and database spans get the stable attribute names from the instrumentations themselves
(`OTEL_SEMCONV_STABILITY_OPT_IN`, see `orrery.ops.tracing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode

if TYPE_CHECKING:
    from opentelemetry.util.types import Attributes

DROPPED = frozenset({"model_request_parameters", "model_name", "agent_name"})
DROPPED_PREFIXES = ("logfire.",)


def provider_of(model: str) -> str:
    """The provider a model id names: `openai/gpt-4o` -> `openai`; Orrery's own offline model ->
    `orrery`; a fallback chain (`fallback:a,b`) -> its first model's."""
    first = model.removeprefix("fallback:").split(",")[0]
    if "/" in first:
        return first.split("/", 1)[0]
    return "orrery" if first == "offline" else first


def conventional_attributes(span: ReadableSpan, *, content: bool = False) -> dict[str, Any]:
    """`span`'s attributes as they should be exported (see the module docstring); `content`: whether
    content is traced (the tool definitions go with it)."""
    source = dict(span.attributes or {})
    dropped = DROPPED if content else DROPPED | {"gen_ai.tool.definitions"}
    out = {k: v for k, v in source.items() if k not in dropped and not k.startswith(DROPPED_PREFIXES)}
    if source.get("gen_ai.request.model") == "offline" and "gen_ai.provider.name" in out:
        out["gen_ai.provider.name"] = "orrery"
    model = source.get("model_name")
    if source.get("gen_ai.operation.name") == "invoke_agent" and isinstance(model, str):
        out.setdefault("gen_ai.request.model", model)
        out.setdefault("gen_ai.provider.name", provider_of(model))
    if span.status.status_code == StatusCode.ERROR and "error.type" not in out:
        raised = [(e.attributes or {}).get("exception.type") for e in span.events if e.name == "exception"]
        out["error.type"] = next((str(kind) for kind in raised if kind), "_OTHER")
    return out


def _rewritten(span: ReadableSpan, content: bool) -> ReadableSpan:
    attributes: Attributes = conventional_attributes(span, content=content)
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=span.events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class ConventionalExporter(SpanExporter):
    """Exports through `inner` with every span's attributes made conventional (`content`: whether
    content is traced)."""

    def __init__(self, inner: SpanExporter, *, content: bool = False) -> None:
        self.inner = inner
        self.content = content

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([_rewritten(s, self.content) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
