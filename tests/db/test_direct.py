"""`Direct`: a turn's hot statements run on the driver and read back exactly what SQLAlchemy reads;
a driver error is SQLAlchemy's error (a dead connection invalidated); where it cannot run on the
driver (a PostgreSQL transaction, an engine traced per statement) it is SQLAlchemy's execution."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import pytest
from sqlalchemy import String, event, insert, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from orrery.db.direct import Direct, Loader
from orrery.db.engine import Database
from orrery.db.models import ApiKey, Message
from orrery.knowledge.search import _PG_RANKED, _SQLITE_RANKED, _member
from orrery.memory.history import _WINDOW_ROWS
from orrery.memory.long_term import _MEMORY_IN_PROJECT
from orrery.memory.messages import append_message
from orrery.ops.metrics import DB_STATEMENTS, count_statements
from orrery.repo import chat
from tests.conftest import DIALECTS
from tests.support.postgres import ThrowawayPostgres


async def _chat(db: Database, demo: Any, texts: list[str]) -> uuid.UUID:
    async with db.transaction() as s:
        sid = (await chat.create_session(s, demo.user_id, project_id=demo.project_id)).id
        for i, content in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            calls = [{"name": "search", "args": {"q": content}}] if i == 1 else None
            await append_message(s, demo.user_id, sid, chat.NewMessage(role, content, tool_calls=calls))
    return sid


def _plain(rows: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in rows]


async def test_the_hot_statements_read_what_sqlalchemy_reads(db: Database, demo: Any) -> None:
    sid = await _chat(db, demo, ["Where is the launch plan?", 'In the *plan*: {"a": 1}', "Thanks!"])
    sqlite = db.dialect == "sqlite"
    search = _SQLITE_RANKED if sqlite else _PG_RANKED
    terms = {"match": '"billing"*', "tsquery": "billing:*", "n": 5}
    cases = [
        (_WINDOW_ROWS[sqlite], {"session_id": sid, "after_seq": 0, "latest_seq": 3}),
        (_MEMORY_IN_PROJECT, {"user_id": demo.user_id, "project_id": demo.project_id}),
        (search, {"p": demo.project_id, **terms, **_member(demo.project_id, demo.user_id)}),
    ]
    for direct, params in cases:
        async with db.single() as s:
            fast = await direct.rows(s, params)
            slow = (await (await s.connection()).execute(direct.statement, params)).all()
        assert fast and _plain(fast) == _plain(slow)
        # by name too (a repeated or unnamed column is named its own way by each dialect: by position)
        names = [k for k in slow[0]._fields if k in fast[0]._fields]
        assert {"seq", "email", "code"} & set(names)
        assert [getattr(fast[0], k) for k in names] == [getattr(slow[0], k) for k in names]
    async with db.single() as s:
        window = await _WINDOW_ROWS[sqlite].rows(s, {"session_id": sid, "after_seq": 1, "latest_seq": 2})
    assert [(r.seq, r.role, r.has_tool_calls) for r in window] == [(2, "assistant", True)]


async def test_a_driver_error_is_sqlalchemys_error_and_stores_nothing(db: Database, demo: Any) -> None:
    sid = await _chat(db, demo, ["first"])
    add = Direct(insert(Message.__table__))
    async with db.single() as s:
        (row,) = (await s.execute(select(Message.__table__).where(Message.session_id == sid))).all()
    duplicate = {**row._mapping, "id": uuid.uuid4()}  # the same (session, seq): a unique violation
    with pytest.raises(IntegrityError):
        async with db.statement() as s:
            await add.rows(s, duplicate)
    async with db.single() as s:
        assert (await s.execute(select(Message.id).where(Message.session_id == sid))).all() == [(row.id,)]


async def test_each_statement_is_counted_and_a_traced_engine_sees_it(db: Database, demo: Any) -> None:
    count_statements(db.engine)
    before = DB_STATEMENTS.labels(kind="select")._value.get()
    query = Direct(select(ApiKey.prefix).where(ApiKey.user_id == demo.user_id))
    async with db.single() as s:
        assert await query.rows(s, {})
    assert DB_STATEMENTS.labels(kind="select")._value.get() == before + 1
    seen: list[str] = []
    listener = lambda *args: seen.append(args[2])  # noqa: E731 - after_cursor_execute's statement
    event.listen(db.engine.sync_engine, "after_cursor_execute", listener)
    try:
        async with db.single() as s:
            assert await query.rows(s, {})
    finally:
        event.remove(db.engine.sync_engine, "after_cursor_execute", listener)
    assert len(seen) == 1 and "api_keys" in seen[0]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
async def test_in_a_postgresql_transaction_it_is_part_of_the_transaction(db: Database, demo: Any) -> None:
    sid = await _chat(db, demo, [])
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "kept"))
    with pytest.raises(RuntimeError):
        async with db.transaction() as s:
            await append_message(s, demo.user_id, sid, chat.NewMessage("user", "rolled back"))
            raise RuntimeError("the transaction fails after the insert")
    async with db.single() as s:
        texts = (await s.execute(select(Message.content).where(Message.session_id == sid))).scalars()
        assert list(texts) == ["kept"]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
async def test_a_connection_that_died_is_invalidated_and_the_next_statement_is_served(
    db: Database, demo: Any, pg_server: ThrowawayPostgres
) -> None:
    query = Direct(select(text("pg_backend_pid()")))
    async with db.single() as s:
        (row,) = await query.rows(s, {})
        other = await asyncpg.connect(
            host="127.0.0.1", port=pg_server.port, user=pg_server.user, database="postgres"
        )
        try:
            assert await other.fetchval("SELECT pg_terminate_backend($1, 10000)", row[0])
        finally:
            await other.close()
        with pytest.raises(DBAPIError) as failed:
            await query.rows(s, {})
        assert failed.value.connection_invalidated
    async with db.single() as s:
        (again,) = await query.rows(s, {})
    assert again[0] != row[0]


async def test_a_loader_builds_what_the_orm_loads_and_tracks_changes(db: Database, demo: Any) -> None:
    sid = await _chat(db, demo, ["hello"])
    loader = Loader.of(Message)
    query = Direct(select(*loader.columns).where(Message.session_id == sid))
    async with db.single() as s:
        (row,) = await query.rows(s, {})
        built = loader.build(row)
        loaded = (await s.execute(select(Message).where(Message.session_id == sid))).scalar_one()
        assert built is not None and built is not loaded
        assert {k: getattr(built, k) for k in loader.keys} == {k: getattr(loaded, k) for k in loader.keys}
        assert loader.load(s, row) is loaded  # the session's own object for that row
    async with db.transaction() as s:
        (row,) = await query.rows(s, {})
        attached = loader.load(s, row)
        assert attached is not None and attached in s
        attached.status = "failed"
    async with db.single() as s:
        assert (await s.execute(select(Message.status).where(Message.session_id == sid))).scalar() == "failed"
    assert loader.build([None] * len(loader.keys)) is None  # an outer join's miss


async def test_a_row_is_stored_as_sqlalchemy_stores_it(db: Database, demo: Any) -> None:
    sid = await _chat(db, demo, [])
    insert_row = insert(Message.__table__)
    async with db.statement() as s:  # on the driver (PostgreSQL: AUTOCOMMIT), no tool calls: JSON `null`
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "on the driver"))
    async with db.transaction() as s:  # the same row again, through SQLAlchemy
        row = (await s.execute(select(Message.__table__).where(Message.session_id == sid))).one()
        await s.execute(
            insert_row, {**row._mapping, "id": uuid.uuid4(), "seq": 2, "content": "through SQLAlchemy"}
        )
    stored = select(Message.content, Message.tool_calls.cast(String), Message.created_at).where(
        Message.session_id == sid
    )
    async with db.single() as s:
        (fast, slow) = (await s.execute(stored.order_by(Message.seq))).all()
    assert fast[1:] == slow[1:] and fast[1] is not None  # the same JSON `null`, the same timestamp


def test_a_parameter_left_out_is_refused_not_stored_as_null() -> None:
    from sqlalchemy.dialects.sqlite import aiosqlite

    compiled = Direct(insert(Message.__table__)).compiled(aiosqlite.dialect())
    with pytest.raises(TypeError, match="'content'"):
        compiled.args({"id": uuid.uuid4(), "session_id": uuid.uuid4(), "seq": 1, "role": "user"})
