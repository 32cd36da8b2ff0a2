"""A 2xx means committed: every route commits before its status line is sent, and a commit that
fails answers 503 + `Retry-After` with nothing stored (never a success for a lost write).

The failure is real, not mocked: a constraint checked only at COMMIT (a deferred foreign key on
SQLite, a deferred constraint trigger on PostgreSQL) refuses every new chat session.
"""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select, text

from orrery.db.engine import Database
from orrery.db.models import ChatSession

SQLITE_GUARD = [
    "CREATE TABLE commit_guard_parent (id INTEGER PRIMARY KEY)",
    "CREATE TABLE commit_guard "
    "(ref INTEGER REFERENCES commit_guard_parent (id) DEFERRABLE INITIALLY DEFERRED)",
    "CREATE TRIGGER refuse_at_commit AFTER INSERT ON chat_sessions "
    "BEGIN INSERT INTO commit_guard (ref) VALUES (-1); END",
]
POSTGRES_GUARD = [
    "CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$",
    "CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON chat_sessions "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()",
]


async def _sessions(db: Database) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(ChatSession))).scalar_one())


async def _refuse_commits(db: Database) -> None:
    async with db.transaction() as s:
        for statement in SQLITE_GUARD if db.dialect == "sqlite" else POSTGRES_GUARD:
            await s.execute(text(statement))


async def test_a_failed_commit_answers_503_with_retry_after_and_stores_nothing(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    before = await _sessions(db)
    await _refuse_commits(db)
    refused = await api.post("/v1/sessions", json={"project_id": str(demo.project_id), "title": "lost?"})
    assert refused.status_code == 503, refused.text
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["error"]["code"] == "unavailable"
    assert await _sessions(db) == before  # the row is not there

    # the same request without the guard succeeds, and its 201 is readable at once
    async with db.transaction() as s:
        await s.execute(
            text("DROP TRIGGER refuse_at_commit" + ("" if db.dialect == "sqlite" else " ON chat_sessions"))
        )
    created = await api.post("/v1/sessions", json={"project_id": str(demo.project_id), "title": "kept"})
    assert created.status_code == 201
    assert await _sessions(db) == before + 1
    assert (await api.get(f"/v1/sessions/{created.json()['id']}")).status_code == 200


async def test_a_route_error_still_answers_its_own_status_and_writes_nothing(
    api: httpx.AsyncClient, db: Database
) -> None:
    before = await _sessions(db)
    focus = {"kind": "task", "id": "00000000-0000-4000-8000-000000000000"}
    refused = await api.post("/v1/sessions", json={"focus": focus})  # a focus without a project
    assert refused.status_code in (404, 422), refused.text
    assert await _sessions(db) == before
