"""OpenTelemetry tracing, off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set.

One trace per turn: the FastAPI server span is the root; pydantic-ai's own instrumentation adds the
agent run, each model request (with token usage) and each tool call beneath it, and with
`ORRERY_TRACE_SQL` SQLAlchemy adds a span per statement (off by default: a turn runs a dozen
statements, which would be most of its spans). Spans go to the OTLP/HTTP collector in batches.

Attribute names follow the semantic conventions: HTTP and database spans use the stable names
(`http.request.method`, `http.response.status_code`, `url.path`, `db.query.text`, ...: the
instrumentations' `OTEL_SEMCONV_STABILITY_OPT_IN=http,database`, set unless the operator chose a
mode), and `ConventionalExporter` (`orrery.ops.span_conventions`) fixes up the GenAI spans.

What leaves the process is bounded: prompt and completion text only with `ORRERY_TRACE_CONTENT`;
no span per SSE chunk (the ASGI send/receive spans are off); no root span for SQL outside a request
(start-up, background jobs). Every span carries the request id, and a turn's the session id as
`gen_ai.conversation.id`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from orrery.config import Settings
from orrery.ops.logs import conversation_id, request_id
from orrery.ops.span_conventions import ConventionalExporter

if TYPE_CHECKING:
    from fastapi import FastAPI
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from sqlalchemy.ext.asyncio import AsyncEngine


def setup_tracing(
    app: FastAPI, settings: Settings, exporter: SpanExporter | None = None
) -> TracerProvider | None:
    """Instrument the app and pydantic-ai when tracing is on (or an `exporter` is given, e.g. tests'
    in-memory one); the provider is kept on `app.state` for `instrument_engine`."""
    if exporter is None and not settings.otel_exporter_otlp_endpoint:
        app.state.tracer_provider = None
        return None
    # read once per process, when an instrumentation first starts: before any of them does
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "http,database")
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.otel_service_name}), sampler=_sampler()
    )
    provider.add_span_processor(_stamp_processor())
    content = settings.trace_content
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(ConventionalExporter(exporter, content=content)))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        assert settings.otel_exporter_otlp_endpoint is not None
        endpoint = settings.otel_exporter_otlp_endpoint.rstrip("/") + "/v1/traces"
        otlp = ConventionalExporter(OTLPSpanExporter(endpoint=endpoint), content=content)
        provider.add_span_processor(BatchSpanProcessor(otlp))
    FastAPIInstrumentor.instrument_app(
        app, tracer_provider=provider, excluded_urls="health,metrics", exclude_spans=["receive", "send"]
    )
    Agent.instrument_all(
        InstrumentationSettings(
            tracer_provider=provider,
            include_content=content,
            include_binary_content=content,
            include_model_request_parameters=False,  # every tool's schema, on every model request
        )
    )
    app.state.tracer_provider = provider
    return provider


def _sampler() -> Any:
    """Children follow their parent; a root span is kept unless it is a client call (SQL at
    start-up or in a background job), which would otherwise be a one-span trace of its own."""
    from opentelemetry.sdk.trace.sampling import Decision, ParentBased, Sampler, SamplingResult
    from opentelemetry.trace import SpanKind

    class NoRootClientSpans(Sampler):
        def should_sample(
            self,
            parent_context: Any,
            trace_id: int,
            name: str,
            kind: Any = None,
            attributes: Any = None,
            links: Any = None,
            trace_state: Any = None,
        ) -> Any:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, trace_state)

        def get_description(self) -> str:
            return "NoRootClientSpans"

    return ParentBased(root=NoRootClientSpans())


def _stamp_processor() -> Any:
    """Stamps each span, as it starts, with the request id and the turn's session id."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Stamp(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            if rid := request_id.get():
                span.set_attribute("orrery.request_id", rid)
            if sid := conversation_id.get():
                span.set_attribute("gen_ai.conversation.id", sid)

    return Stamp()


def instrument_engine(engine: AsyncEngine, provider: TracerProvider | None, settings: Settings) -> None:
    """A span per SQL statement on this engine, when tracing and `ORRERY_TRACE_SQL` are on."""
    if provider is None or not settings.trace_sql:
        return
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    # The instrumentation declares SQLAlchemy < 2.1; its engine events work on 2.1 (tested), so the
    # version check is skipped rather than silently tracing nothing.
    SQLAlchemyInstrumentor().instrument(
        engine=engine.sync_engine, tracer_provider=provider, skip_dep_check=True
    )


def shutdown_tracing(app: FastAPI) -> None:
    """At shutdown: flush spans still in the batch and undo the process-wide instrumentation."""
    provider: TracerProvider | None = getattr(app.state, "tracer_provider", None)
    if provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
    from pydantic_ai import Agent

    provider.shutdown()
    if SQLAlchemyInstrumentor().is_instrumented_by_opentelemetry:  # only with ORRERY_TRACE_SQL
        SQLAlchemyInstrumentor().uninstrument()
    FastAPIInstrumentor.uninstrument_app(app)
    Agent.instrument_all(False)
    app.state.tracer_provider = None
