"""PostgreSQL: the pool's pre-ping asks the connection itself whether it is alive (no round trip).
When the server ends the backends (a restart, an operator, an idle timeout), the next checkout sees
the closed connections, replaces them, and the next request is served: nothing fails."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from sqlalchemy import text

from orrery.db.engine import Database
from tests.conftest import DIALECTS, settings_for
from tests.support.postgres import ThrowawayPostgres

pytestmark = [
    pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only"),
    pytest.mark.parametrize("db_url", ["postgresql"], indirect=True),
]


async def _backend_pid(db: Database) -> int:
    async with db.readers() as s:
        return int((await s.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def _end_backend(server: ThrowawayPostgres, pid: int) -> None:
    """End one backend from outside, as an operator or a restart would, and wait until it is gone."""
    conn = await asyncpg.connect(host="127.0.0.1", port=server.port, user=server.user, database="postgres")
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1, 10000)", pid)  # waits for its end
    finally:
        await conn.close()


async def test_connections_the_server_ended_are_replaced_before_a_request_uses_them(
    db_url: str, pg_server: ThrowawayPostgres
) -> None:
    db = Database.from_settings(settings_for(db_url))
    try:
        ended = await _backend_pid(db)  # its connection waits in the pool now
        await _end_backend(pg_server, ended)
        await asyncio.sleep(0.1)  # the event loop reads the closed socket (not a timing assertion)
        assert await _backend_pid(db) != ended  # served, on a new connection
    finally:
        await db.dispose()
