"""Reads never take the write lock: every GET (and read-only POST) of the API answers while another
connection holds SQLite's write lock, and a read session never writes what its objects change."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from tests.conftest import DIALECTS, settings_for
from tests.support.web import sign_in


@pytest.fixture
def settings(db_url: str) -> Settings:
    """A short busy timeout: a read that waited for the lock would fail fast instead of slowly."""
    return settings_for(db_url, sqlite_busy_timeout_ms=100)


async def test_a_read_session_keeps_changes_in_memory_and_writes_nothing(db: Database, demo: Any) -> None:
    async with db.readers() as s:
        record = (await s.execute(select(ChatSession).where(ChatSession.user_id == demo.user_id))).scalar()
        assert record is not None
        record.title = "changed in a read"
        await s.flush()  # skipped: a read session never writes
        s.add(ChatSession(user_id=demo.user_id, title="added in a read"))
        await s.commit()
    async with db.sessions() as s:
        titles = (
            await s.execute(select(ChatSession.title).where(ChatSession.user_id == demo.user_id))
        ).scalars()
        assert {"changed in a read", "added in a read"}.isdisjoint(set(titles))


def _read_requests(demo: Any, sid: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    pid, task = str(demo.project_id), str(next(iter(demo.focus.values())))
    get = [
        "/v1/me",
        "/v1/projects",
        f"/v1/projects/{pid}",
        f"/v1/projects/{pid}/entities",
        f"/v1/entities/{task}",
        f"/v1/entities/{task}/linked",
        "/v1/sessions",
        f"/v1/sessions/{sid}",
        f"/v1/sessions/{sid}/context",
        f"/v1/sessions/{sid}/context?scoping=summary",
        f"/v1/projects/{pid}/kb/search?q=billing",
        f"/v1/projects/{pid}/kb/collections",
        f"/v1/projects/{pid}/kb/entries/BR-012",
        f"/v1/projects/{pid}/docs",
        "/v1/check-ins",
        "/v1/me/summary",
        "/v1/me/usage",
    ]
    posts: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/v1/context/build", {"seeds": [task]}),
        ("POST", "/v1/context/load-for-task", {"project_id": pid, "task_description": "usage billing"}),
    ]
    return [("GET", path, None) for path in get] + posts


@pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite's write lock")
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_every_read_answers_while_another_connection_holds_the_write_lock(
    api: httpx.AsyncClient, settings: Settings, demo: Any
) -> None:
    made = await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})
    sid = made.json()["id"]
    turn = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": "What next?"}, headers={"Accept": "application/json"}
    )
    assert turn.status_code == 200, turn.text  # (also stamps the key's use: auth needs no write later)
    signed_in = await sign_in(api, demo.api_key)  # the web app, too
    assert signed_in.status_code == 303
    pages = ["/", f"/s/{sid}", f"/s/{sid}/messages?before=3", f"/s/{sid}/inspector", "/search?q=next"]
    holder = sqlite3.connect(settings.database_url.split("///", 1)[1], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing, as far as the server can tell
    try:
        for method, path, body in _read_requests(demo, sid):
            answer = await api.request(method, path, json=body)
            assert answer.status_code < 500, (path, answer.status_code, answer.text)
        for page in pages:
            shown = await api.get(page)
            assert shown.status_code in (200, 303), (page, shown.status_code, shown.text[:300])
        blocked = await api.post("/v1/sessions", json={})  # the lock is real: a write must wait
        assert blocked.status_code == 503 and "Retry-After" in blocked.headers
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (await api.post("/v1/sessions", json={})).status_code == 201


async def test_a_single_statement_read_runs_without_a_transaction(db: Database, demo: Any) -> None:
    """`Database.single` sends no BEGIN (and no COMMIT); on SQLite the pooled connection stays in
    the driver's autocommit mode, so the next transaction's own BEGIN is the only one."""
    from sqlalchemy import event

    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement.split()[0].upper())

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        async with db.single() as s:
            assert (
                await s.execute(select(ChatSession.id).where(ChatSession.user_id == demo.user_id))
            ).first()
        assert sent == ["SELECT"]
        async with db.sessions() as s:
            await s.execute(select(ChatSession.id).limit(1))
            if db.dialect == "sqlite":
                raw = await (await s.connection()).get_raw_connection()
                assert raw.driver_connection._conn.isolation_level is None  # type: ignore[union-attr]
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)
    assert sent[1:] == (["BEGIN", "SELECT"] if db.dialect == "sqlite" else ["SELECT"])
