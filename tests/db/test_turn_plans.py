"""PostgreSQL: every statement of a turn reads what the turn needs, not the session's length nor the
other people's messages (issue 53). A person with a long chat and 50 earlier chats beside 200,000
other people's messages on the same words, asked about a rare word and about one of the chat's
recurring words; each statement a turn sends (storing the question,
building the context, recall) is run again under `EXPLAIN ANALYZE` with the generic plan the
server uses (`plan_cache_mode = force_generic_plan`, `db.engine`), and the rows it touched in
`messages` are counted: on a database the planner has no statistics for, and after `ANALYZE`."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg
import pytest
from sqlalchemy import event, text

from bench.chats import TOPICS, write_chat
from bench.others import add_others
from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo import chat
from orrery.repo.identity import create_user
from tests.conftest import DIALECTS

pytestmark = [
    pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only"),
    pytest.mark.parametrize("db_url", ["postgresql"], indirect=True),
]

OTHERS = 200_000
LONG_CHAT = 3_000
EARLIER = (50, 40)
READ_AT_MOST = 600
"""Rows of `messages` one statement may touch beyond twice those it returns (each read once in an
index and once in the table): far below the chat's 3,000 messages and the others' 200,000."""
WORDS = TOPICS
"""The chats talk of the last eight (each in about a quarter of the messages), of the garden in one
message of 50, and never of the ferry."""
QUESTIONS = (
    "What did I say about the garden and the ferry?",
    "What did I say about the budget and the invoice?",
)
"""Rare words (the chat's full-text index finds every match), then recurring ones (matched only
among the newest older messages)."""


async def _chat(s: Any, user_id: uuid.UUID, n: int, offset: int) -> uuid.UUID:
    """A chat of `n` messages; one in 50 mentions the garden (what the turn asks about)."""
    c = await chat.create_session(s, user_id)
    contents = []
    for i in range(n):
        topic = "garden" if i % 50 == offset else WORDS[2 + (i + offset) % 8]
        contents.append(f"About the {topic} and the {WORDS[2 + (i * 3 + offset) % 8]}: item {i}.")
    await write_chat(s, c.id, contents)
    return c.id


async def _person(db: Database) -> tuple[uuid.UUID, uuid.UUID]:
    async with db.transaction() as s:
        user = await create_user(s, f"ann-{uuid.uuid4().hex[:6]}@example.org", "Ann")
        for c in range(EARLIER[0]):
            await _chat(s, user.id, EARLIER[1], c)
        current = await _chat(s, user.id, LONG_CHAT, 7)
    return user.id, current


async def _turn(
    db: Database, settings: Settings, user_id: uuid.UUID, sid: uuid.UUID, question: str
) -> list[tuple[str, Any]]:
    """The statements of one turn's reads and writes, with their parameters."""
    caught: list[tuple[str, Any]] = []

    def before(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if not statement.startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")):
            caught.append((statement, params))

    event.listen(db.engine.sync_engine, "before_cursor_execute", before)
    try:
        async with db.transaction() as s:
            await append_message(s, user_id, sid, chat.NewMessage("user", question))
        async with db.transaction() as s:
            await assemble_working_context(
                s, agent="coach", session_id=sid, user_id=user_id, settings=settings, scoping="relevance"
            )
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", before)
    return caught


def _touched(plan: dict[str, Any]) -> int:
    """Rows of `messages` (heap or index) this plan node and those below it touched."""
    own = 0
    on_messages = plan.get("Relation Name") == "messages" or "messages" in plan.get("Index Name", "")
    if on_messages:
        seen = plan.get("Actual Rows", plan.get("Plan Rows", 0)) + plan.get("Rows Removed by Filter", 0)
        own = int((seen + plan.get("Rows Removed by Index Recheck", 0)) * plan.get("Actual Loops", 1))
    return own + sum(_touched(p) for p in plan.get("Plans", []))


def _literal(value: Any) -> str:
    """A bound value written as an SQL literal (`EXECUTE` takes no parameters of its own)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else repr(value)
    if isinstance(value, list | tuple):
        return "ARRAY[" + ", ".join(_literal(v) for v in value) + "]" if value else "'{}'"
    if isinstance(value, bytes):
        return "'\\x" + value.hex() + "'"
    text_value = json.dumps(value) if isinstance(value, dict) else str(value)
    return "'" + text_value.replace("'", "''") + "'"


async def _explained(url: str, statements: list[tuple[str, Any]]) -> list[tuple[int, str]]:
    """(rows of `messages` touched beyond twice those returned, statement) for each statement, under
    its generic plan; writes are rolled back."""
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    out = []
    try:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        for i, (sql, params) in enumerate(statements):
            tx = conn.transaction()
            await tx.start()
            try:
                await conn.execute(f"PREPARE turn_{i} AS {sql}")
                args = ", ".join(_literal(v) for v in params or ())
                call = f"EXECUTE turn_{i}({args})" if args else f"EXECUTE turn_{i}"
                run = "" if "INSERT INTO" in sql.upper() else "ANALYZE, "  # its row exists already
                raw = await conn.fetchval(f"EXPLAIN ({run}FORMAT JSON) {call}")
                plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
                out.append((_touched(plan) - 2 * plan.get("Actual Rows", 0), sql))
            finally:
                await tx.rollback()
    finally:
        await conn.close()
    return out


async def test_a_turns_statements_read_neither_the_whole_chat_nor_other_people(
    db: Database, settings: Settings, db_url: str
) -> None:
    async with db.engine.begin() as conn:
        assert await add_others(conn, OTHERS) == OTHERS
    user_id, sid = await _person(db)
    for analyzed in (False, True):
        if analyzed:
            async with db.engine.connect() as conn:
                await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("ANALYZE"))
        for question in QUESTIONS:
            statements = await _turn(db, settings, user_id, sid, question)
            explained = await _explained(db_url, statements)
            assert len(explained) >= 8
            worst = max(explained)
            assert worst[0] <= READ_AT_MOST, (analyzed, question, worst)
