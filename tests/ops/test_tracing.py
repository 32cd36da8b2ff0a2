"""Tracing: one turn over HTTP is one trace holding the HTTP, agent, model, tool and SQL spans,
exported through the same setup code production uses (with the SDK's in-memory exporter)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo

from orrery.agents.orchestrator import Orchestrator
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.ops.tracing import setup_tracing, shutdown_tracing
from orrery.repo import chat
from tests.ops.conftest import focused_session, sse_events
from tests.support.models import streaming
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
        start_up = exporter.get_finished_spans()
        sid = await focused_session(api, demo)
        exporter.clear()
        response = await api.post(
            f"/v1/sessions/{sid}/messages",
            json={"content": "What is this task blocked by?"},
            headers={"X-Request-ID": "trace-req-1"},
        )
        kinds = [k for k, _ in sse_events(response.text)]
        assert kinds[-1] == "done" and "tool_call" in kinds
        spans = exporter.get_finished_spans()
    assert app.state.tracer_provider is None  # shutdown undid the process-wide instrumentation
    assert not [s.name for s in start_up if s.parent is None]  # start-up SQL makes no traces of its own
    assert not [s.name for s in spans if s.name.endswith(("http send", "http receive"))]  # not per chunk
    assert not [s.name for s in spans if (s.attributes or {}).get("orrery.request_id") != "trace-req-1"]
    [run] = [s for s in spans if s.name == "invoke_agent planner"]
    assert (run.attributes or {}).get("gen_ai.conversation.id") == sid
    values = [str(v) for s in spans for v in (s.attributes or {}).values()]
    assert not [v for v in values if "blocked by" in v]  # no prompt or completion text by default

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


async def test_content_is_traced_only_when_asked_and_a_failed_model_call_is_an_error(
    settings: Settings, db: Database, demo: Any
) -> None:
    """`ORRERY_TRACE_CONTENT=true` puts the prompt in spans; a model call that fails ends with
    error status, so a collector shows the failed turn as failed."""
    exporter = InMemorySpanExporter()
    traced = settings.model_copy(update={"trace_content": True})
    app = create_app(traced)
    setup_tracing(app, traced, exporter=exporter)

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("provider answered 500")

    try:
        async with db.transaction() as s:
            session = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
        ok = Orchestrator(
            db, traced, lambda name, s: streaming(lambda m, i: ModelResponse([TextPart("fine")]))
        )
        [e async for e in ok.turn(demo.user_id, session.id, "remember the blue invoice", model="scripted")]
        failing = Orchestrator(db, traced, lambda name, s: streaming(broken))
        events = [e async for e in failing.turn(demo.user_id, session.id, "and again", model="scripted")]
        assert events[-1].type == "error"
        spans = exporter.get_finished_spans()
    finally:
        shutdown_tracing(app)
    values = [str(v) for s in spans for v in (s.attributes or {}).values()]
    assert [v for v in values if "remember the blue invoice" in v]
    failed_runs = [
        s for s in spans if s.name.startswith("invoke_agent") and s.status.status_code == StatusCode.ERROR
    ]
    assert failed_runs and (failed_runs[0].attributes or {}).get("gen_ai.conversation.id") == str(session.id)
