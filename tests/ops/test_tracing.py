"""Tracing: one turn over HTTP is one trace holding the HTTP, agent, model, tool and SQL spans,
exported through the same setup code production uses (with the SDK's in-memory exporter)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from backend.api.app import create_app
from backend.config import Settings
from backend.ops.tracing import setup_tracing
from tests.ops.conftest import focused_session, sse_events
from tests.support.serving import serving


async def test_tracing_is_off_without_an_endpoint(settings: Settings) -> None:
    app = create_app(settings)
    assert settings.otel_exporter_otlp_endpoint is None and app.state.tracer_provider is None


async def test_a_turn_is_one_trace_with_http_agent_model_tool_and_sql_spans(
    settings: Settings, demo: Any
) -> None:
    exporter = InMemorySpanExporter()
    app = create_app(settings)
    assert setup_tracing(app, settings, exporter=exporter) is not None
    async with serving(app, demo.api_key) as api:
        sid = await focused_session(api, demo)
        exporter.clear()
        response = await api.post(
            f"/v1/sessions/{sid}/messages", json={"content": "What is this task blocked by?"}
        )
        kinds = [k for k, _ in sse_events(response.text)]
        assert kinds[-1] == "done" and "tool_call" in kinds
        spans = exporter.get_finished_spans()
    assert app.state.tracer_provider is None  # shutdown undid the process-wide instrumentation

    traces = {s.context.trace_id for s in spans}
    assert len(traces) == 1, sorted({s.name for s in spans})
    names = [s.name for s in spans]
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["POST /v1/sessions/{session_id}/messages"]
    assert "invoke_agent planner" in names
    model_spans = [s for s in spans if s.name.startswith("chat ")]
    assert model_spans and all("gen_ai.usage.input_tokens" in (s.attributes or {}) for s in model_spans)
    assert "execute_tool get_linked_entities" in names
    sql_spans = [
        s
        for s in spans
        if (s.attributes or {}).get("db.system") or (s.attributes or {}).get("db.system.name")
    ]
    assert len(sql_spans) >= 3, names


class _Collector(BaseHTTPRequestHandler):
    """A minimal OTLP/HTTP receiver: keeps the span names of every protobuf export it is sent."""

    received: list[tuple[str, list[str]]] = []

    def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        names = [s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
        self.received.append((self.path, names))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def test_spans_reach_a_real_otlp_http_receiver(settings: Settings, demo: Any) -> None:
    receiver = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    _Collector.received = []
    try:
        endpoint = f"http://127.0.0.1:{receiver.server_port}"
        app = create_app(settings.model_copy(update={"otel_exporter_otlp_endpoint": endpoint}))
        assert app.state.tracer_provider is not None
        async with serving(app, demo.api_key) as api:
            assert (await api.get("/v1/me")).status_code == 200
        # Shutdown flushed the batch to the collector.
    finally:
        receiver.shutdown()
        thread.join()
    paths = {path for path, _ in _Collector.received}
    names = [n for _, batch in _Collector.received for n in batch]
    assert paths == {"/v1/traces"} and "GET /v1/me" in names and any(n.startswith("SELECT") for n in names)
