"""PostgreSQL: a connection plans each prepared statement once, generically (`GENERIC_PLANS`), instead
of afresh for each of its first five runs."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo.chat import NewMessage, create_session, session_and_latest
from orrery.repo.identity import create_user
from tests.conftest import DIALECTS

pytestmark = [
    pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only"),
    pytest.mark.parametrize("db_url", ["postgresql"], indirect=True),
]

PLANS = (
    "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
    " WHERE statement LIKE '%AS any_failed%' AND statement NOT LIKE '%pg_prepared_statements%'"
)


async def test_a_turns_read_is_planned_once_and_generically(db: Database) -> None:
    async with db.transaction() as s:
        user = await create_user(s, f"ann-{uuid.uuid4().hex[:6]}@example.org", "Ann")
        chat = await create_session(s, user.id, title="plans")
        for i in range(3):
            role = "user" if i % 2 == 0 else "assistant"
            await append_message(s, user.id, chat.id, NewMessage(role, f"m{i}"))
    async with db.readers() as s:  # one connection: its prepared statements and their plans
        assert (await s.execute(text("SHOW plan_cache_mode"))).scalar_one() == "force_generic_plan"
        for _ in range(3):
            state = await session_and_latest(s, user.id, chat.id)
            assert state.latest is not None and state.latest.seq == 3 and not state.any_failed
        generic, custom = (await s.execute(text(PLANS))).one()
        assert (generic, custom) == (3, 0)
