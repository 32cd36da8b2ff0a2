"""Plugs the operations pieces into the FastAPI app: request ids and logs, tracing, `/metrics` and
usage routes at build time; engine spans and the background-job worker while it runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from orrery.config import Settings
from orrery.ops.logs import RequestIdMiddleware, configure_logging
from orrery.ops.metrics import count_statements
from orrery.ops.tracing import instrument_engine, setup_tracing, shutdown_tracing

if TYPE_CHECKING:
    from fastapi import FastAPI

    from orrery.agents.orchestrator import Orchestrator


def install_operations(app: FastAPI, settings: Settings) -> None:
    """At app build time."""
    from orrery.api.routes import ops

    configure_logging(settings)
    app.include_router(ops.router)
    setup_tracing(app, settings)
    app.add_middleware(RequestIdMiddleware)  # added last: outermost, so every log line has the id


@asynccontextmanager
async def operations_running(app: FastAPI, orchestrator: Orchestrator) -> AsyncIterator[None]:
    """While the app serves: SQL spans on its engine and the job worker polling."""
    instrument_engine(
        orchestrator.db.engine, getattr(app.state, "tracer_provider", None), orchestrator.settings
    )
    count_statements(orchestrator.db.engine)
    orchestrator.jobs.start()
    try:
        yield
    finally:
        await orchestrator.jobs.stop()
        shutdown_tracing(app)
