"""OpenTelemetry tracing, off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set.

One trace per turn: the FastAPI server span is the root; pydantic-ai's own instrumentation adds the
agent run, each model request (with token usage) and each tool call beneath it, and SQLAlchemy adds
a span per statement. Spans go to the OTLP/HTTP collector in batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.config import Settings

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
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    provider = TracerProvider(resource=Resource.create({"service.name": settings.otel_service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        assert settings.otel_exporter_otlp_endpoint is not None
        endpoint = settings.otel_exporter_otlp_endpoint.rstrip("/") + "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider, excluded_urls="health,metrics")
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    app.state.tracer_provider = provider
    return provider


def instrument_engine(engine: AsyncEngine, provider: TracerProvider | None) -> None:
    """A span per SQL statement on this engine, when tracing is on."""
    if provider is None:
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
    SQLAlchemyInstrumentor().uninstrument()
    FastAPIInstrumentor.uninstrument_app(app)
    Agent.instrument_all(False)
    app.state.tracer_provider = None
