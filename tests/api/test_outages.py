"""Outages are never a 500: an exhausted pool, a busy SQLite or a database that goes away mid-turn
answer 503 with `Retry-After` in the error shape (JSON), or end the stream with an `error` event
(SSE); messages say what happened without internals (pool sizes, hosts, ports)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import text

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.failures import BUSY, UNAVAILABLE
from orrery.demo.workspace import load_demo
from tests.conftest import DIALECTS, settings_for
from tests.support.postgres import ThrowawayPostgres


@asynccontextmanager
async def _client(settings: Settings) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient, Any]]:
    db = Database.from_settings(settings)
    try:
        demo = await load_demo(db, settings.secret_key)
    finally:
        await db.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        headers = {"Authorization": f"Bearer {demo.api_key}"}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://orrery", headers=headers) as http:
            yield app, http, demo


def _assert_503(response: httpx.Response, message: str) -> None:
    assert response.status_code == 503 and response.headers["retry-after"] == "2"
    assert response.json()["error"] == {
        "code": "unavailable",
        "message": message,
        "details": {"retry_after": 2},
    }


@pytest.mark.demo_db
async def test_an_exhausted_pool_is_a_503_with_retry_after(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(db_url, db_pool_size=1, db_max_overflow=0, db_pool_timeout_seconds=0.2)
    async with _client(settings) as (app, http, demo):
        async with app.state.db.engine.connect() as held:  # the only pooled connection is taken
            await held.execute(text("SELECT 1"))
            caplog.clear()
            _assert_503(await http.get("/v1/projects"), BUSY)
            _assert_503(await http.get("/v1/me"), BUSY)
        assert (await http.get("/v1/projects")).status_code == 200
    answered = [r for r in caplog.records if r.getMessage().startswith("answered 503")]
    assert len(answered) == 2  # one line per request, no traceback (an outage wrote MBs a minute)
    assert not [r for r in caplog.records if r.exc_info or "\n" in r.getMessage()]


@pytest.fixture
def sqlite_url(tmp_path: Any, sqlite_template: Any) -> Iterator[str]:
    import shutil

    path = tmp_path / "busy.db"
    shutil.copy(sqlite_template, path)
    yield str(path)


@pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite only")
async def test_a_busy_sqlite_is_waited_for_then_a_503_never_a_500(sqlite_url: str) -> None:
    """A write waits for another process's lock up to the busy timeout (the turn's messages are
    stored by lone statements, others in `BEGIN IMMEDIATE` transactions: the same wait)."""
    settings = settings_for(f"sqlite+aiosqlite:///{sqlite_url}", sqlite_busy_timeout_ms=800)
    async with _client(settings) as (_app, http, demo):
        sid = (await http.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
        other = sqlite3.connect(sqlite_url, isolation_level=None)  # another process's writer
        other.execute("BEGIN IMMEDIATE")
        try:
            turn = asyncio.create_task(
                http.post(
                    f"/v1/sessions/{sid}/messages",
                    json={"content": "hi"},
                    headers={"Accept": "application/json"},
                )
            )
            await asyncio.sleep(0.3)
            other.execute("ROLLBACK")  # released while the turn waits: it goes through
            assert (await turn).status_code == 200
            other.execute("BEGIN IMMEDIATE")  # held past every retry
            assert (await http.get("/v1/me")).status_code == 200  # the key-use stamp fails quietly
            _assert_503(
                await http.post(
                    f"/v1/sessions/{sid}/messages",
                    json={"content": "again"},
                    headers={"Accept": "application/json"},
                ),
                BUSY,
            )
        finally:
            other.execute("ROLLBACK")
            other.close()


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.demo_db
async def test_a_database_gone_mid_turn_ends_the_stream_with_an_error_and_json_with_503(
    db_url: str, pg_server: ThrowawayPostgres
) -> None:
    name = db_url.rsplit("/", 1)[1]

    async def cut_then_answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        await pg_server.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        await pg_server.execute(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        )
        yield "a reply that cannot be stored"

    settings = settings_for(db_url)
    async with _client(settings) as (app, http, demo):
        sid = (await http.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
        app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=cut_then_answer)
        try:
            streamed = await http.post(f"/v1/sessions/{sid}/messages", json={"content": "hi"})
            assert streamed.status_code == 200
            events = [
                (block.split("\n")[0].removeprefix("event: "), json.loads(block.split("\n")[1][6:]))
                for block in streamed.text.strip().split("\n\n")
            ]
            assert events[-1] == ("error", {"message": UNAVAILABLE, "code": "unavailable", "retry": True})
            assert str(pg_server.port) not in streamed.text
            await pg_server.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            answered = await http.post(
                f"/v1/sessions/{sid}/messages",
                json={"content": "hi again"},
                headers={"Accept": "application/json"},
            )
            _assert_503(answered, UNAVAILABLE)
            assert str(pg_server.port) not in answered.text
        finally:
            await pg_server.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


@pytest.fixture
def own_pg_url() -> Iterator[tuple[ThrowawayPostgres, str]]:
    """A migrated database on a PostgreSQL server of the test's own (the test restarts it)."""
    from orrery.db.migrations import upgrade
    from tests.conftest import in_thread

    server = ThrowawayPostgres(commit_waits=True).start()
    try:
        server.run("CREATE DATABASE orrery")
        in_thread(upgrade, server.url("orrery"))
        yield server, server.url("orrery")
    finally:
        server.stop()


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
async def test_after_a_postgres_restart_a_turn_answers_503_never_500_then_is_served(
    own_pg_url: tuple[ThrowawayPostgres, str],
) -> None:
    """A turn holds its session's lock (its model hangs) while PostgreSQL restarts: the lock's
    connection is closed under it, so a turn on another session finds it closed. That is an outage
    (503 + `Retry-After`), and the retry is served on a new lock connection."""
    server, url = own_pg_url
    started, release = asyncio.Event(), asyncio.Event()

    async def hang(messages: list[ModelMessage], info: AgentInfo) -> Any:
        started.set()
        await release.wait()
        yield "late"

    async with _client(settings_for(url)) as (app, http, demo):
        project = {"project_id": str(demo.project_id)}
        first = (await http.post("/v1/sessions", json=project)).json()["id"]
        other = (await http.post("/v1/sessions", json=project)).json()["id"]
        app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=hang)
        held = asyncio.create_task(http.post(f"/v1/sessions/{first}/messages", json={"content": "hold"}))
        try:
            await started.wait()
            await asyncio.to_thread(server.restart)
            app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=_answer)
            turn = {"content": "hi"}
            json_only = {"Accept": "application/json"}
            _assert_503(
                await http.post(f"/v1/sessions/{other}/messages", json=turn, headers=json_only), UNAVAILABLE
            )
            served = await http.post(f"/v1/sessions/{other}/messages", json=turn, headers=json_only)
            assert served.status_code == 200 and served.json()["reply"] == "fine"
        finally:
            release.set()
            await held


async def _answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
    yield "fine"


def test_driver_errors_are_outages_by_what_they_are_not_by_their_class_name() -> None:
    """A raw driver error is an outage when the server's SQLSTATE says the connection is gone or
    cannot be had, or when code that asked the connection says it is closed (`ConnectionLost`);
    a driver's misuse error (a bug) stays a 500 whatever its name."""
    import asyncpg

    from orrery.db.failures import ConnectionLost, as_unavailable

    gone = [
        asyncpg.exceptions.ConnectionDoesNotExistError(),  # 08003
        asyncpg.exceptions.AdminShutdownError(),  # 57P01
        asyncpg.exceptions.CannotConnectNowError(),  # 57P03
        asyncpg.exceptions.TooManyConnectionsError(),  # 53300
        ConnectionLost("the turn lock's connection is closed"),
    ]
    assert [str(as_unavailable(e)) for e in gone] == [UNAVAILABLE] * len(gone)
    not_outages = [
        asyncpg.exceptions.InterfaceError("cannot perform operation: another operation is in progress"),
        asyncpg.exceptions.UniqueViolationError(),  # 23505
    ]
    assert [as_unavailable(e) for e in not_outages] == [None] * len(not_outages)
