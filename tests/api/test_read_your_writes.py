"""Two real server processes on one PostgreSQL: a session created on one is readable on the other
as soon as the 201 arrives (the commit happens before the status line is sent). Before the fix,
4 to 43 of 400 such reads answered 404."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack

import pytest

from tests.conftest import DIALECTS
from tests.support.load import prepare_database, server_process
from tests.support.read_your_writes import create_then_read

SECRET = "ryw-secret"


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_session_created_on_one_process_is_read_at_once_on_the_other(db_url: str) -> None:
    demo = prepare_database(db_url, SECRET)
    with ExitStack() as stack:
        bases = [stack.enter_context(server_process(db_url, SECRET)) for _ in range(2)]
        result = asyncio.run(
            create_then_read(bases, demo["api_key"], demo["project_id"], count=300, concurrency=30)
        )
    assert result.failures == []
    assert result.created == 300
    assert result.misses == []
