"""Tracing: one turn over HTTP is one trace holding the HTTP, agent, model, tool and SQL spans,
exported through the same setup code production uses (with the SDK's in-memory exporter)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
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
from tests.support.upstream import CLIENTS, client_model, fake_provider

MODEL = "openai/fake-model"


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
    assert not [s for s in spans if (s.attributes or {}).get("db.system.name")]  # ORRERY_TRACE_SQL is off
    # the stable HTTP names, and none of pydantic-ai's own attributes that no convention names
    [root] = roots
    assert {"http.request.method": "POST", "http.response.status_code": 200}.items() <= dict(
        root.attributes or {}
    ).items()
    assert "http.method" not in (root.attributes or {})
    keys = {k for s in spans for k in (s.attributes or {})}
    assert not {"model_request_parameters", "model_name", "agent_name"} & keys
    assert not [k for k in keys if k.startswith("logfire.")]
    assert {"gen_ai.request.model": "offline", "gen_ai.provider.name": "orrery"}.items() <= dict(
        run.attributes or {}
    ).items(), dict(run.attributes or {})
    # the offline model's chat spans name Orrery as the provider; no tool schemas without content
    assert {(s.attributes or {}).get("gen_ai.provider.name") for s in model_spans} == {"orrery"}
    assert "gen_ai.tool.definitions" not in keys


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
        traced = {"otel_exporter_otlp_endpoint": endpoint, "trace_sql": True}
        app = create_app(settings.model_copy(update=traced))
        assert app.state.tracer_provider is not None
        async with serving(app, demo.api_key) as api:
            assert (await api.get("/v1/me")).status_code == 200
        # Shutdown flushed the batch to the collector.
    finally:
        receiver.shutdown()
        thread.join()
    paths = {path for path, _ in _Collector.received}
    names = [n for _, batch in _Collector.received for n in batch]
    assert paths == {"/v1/traces"} and "GET /v1/me" in names
    assert any(n.startswith("SELECT") for n in names)  # ORRERY_TRACE_SQL: a span per statement


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
    assert [s for s in spans if "gen_ai.tool.definitions" in (s.attributes or {})]  # with content only
    failed_runs = [
        s for s in spans if s.name.startswith("invoke_agent") and s.status.status_code == StatusCode.ERROR
    ]
    assert failed_runs and (failed_runs[0].attributes or {}).get("gen_ai.conversation.id") == str(session.id)


@pytest.mark.parametrize("client", CLIENTS)
async def test_chat_spans_carry_the_response_and_the_error_by_the_conventions(
    settings: Settings, db: Database, demo: Any, client: str
) -> None:
    """Through either client (direct, litellm) against a fake provider: the `chat` span has
    `gen_ai.response.id` and `gen_ai.response.finish_reasons` and names the client it went through
    (`gen_ai.system`), the `invoke_agent` span names provider and model; a refused
    key ends both with `error.type`. With `ORRERY_TRACE_SQL`, statements are spans with the stable
    `db.query.text`."""
    exporter = InMemorySpanExporter()
    traced = settings.model_copy(update={"trace_sql": True})
    app = create_app(traced)
    setup_tracing(app, traced, exporter=exporter)
    with fake_provider() as (provider, base):

        def model(_name: str, _settings: Settings) -> Model:
            return client_model(client, MODEL, base, num_retries=2)

        async def say(api: Any, sid: str, text: str) -> int:
            response = await api.post(
                f"/v1/sessions/{sid}/messages", json={"content": text}, headers={"Accept": "application/json"}
            )
            return int(response.status_code)

        try:
            async with serving(app, demo.api_key) as api:  # instruments the engine (ORRERY_TRACE_SQL)
                app.state.orchestrator.model_factory = model
                sid = await focused_session(api, demo)
                exporter.clear()
                done = await say(api, sid, "hello")
                ok = exporter.get_finished_spans()
                exporter.clear()
                provider.mode = "unauthorized"
                failed = await say(api, sid, "again")
                refused = exporter.get_finished_spans()
        finally:
            shutdown_tracing(app)
    assert (done, failed) == (200, 502)
    [chat_span] = [s for s in ok if s.name.startswith("chat ")]
    attributes = dict(chat_span.attributes or {})
    assert attributes["gen_ai.system"] == ("openai" if client == "direct" else "litellm")  # who was called
    assert attributes["gen_ai.response.id"] == "c1"
    assert list(attributes["gen_ai.response.finish_reasons"]) == ["stop"]  # type: ignore[arg-type]
    [run] = [s for s in ok if s.name.startswith("invoke_agent")]
    assert {"gen_ai.request.model": MODEL, "gen_ai.provider.name": "openai"}.items() <= dict(
        run.attributes or {}
    ).items()
    statements = [s for s in ok if (s.attributes or {}).get("db.system.name") and s.name != "connect"]
    assert statements and all("db.query.text" in (s.attributes or {}) for s in statements)
    assert not [s for s in statements if "db.statement" in (s.attributes or {})]
    errors = {
        s.name.split()[0]: (s.attributes or {}).get("error.type")
        for s in refused
        if s.status.status_code == StatusCode.ERROR
    }
    assert errors["chat"] == errors["invoke_agent"] == "orrery.agents.credentials.ProviderCredentialsError"
