"""Two real server processes on one PostgreSQL: a session created on one is readable on the other
as soon as the 201 arrives (the commit happens before the status line is sent). Before the fix,
4 to 43 of 400 such reads answered 404."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack

import pytest

from tests.conftest import DIALECTS, settings_for
from tests.support.killable import load_demo_into
from tests.support.load import server_process
from tests.support.read_your_writes import create_then_read


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="PostgreSQL only")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.demo_db
def test_a_session_created_on_one_process_is_read_at_once_on_the_other(db_url: str) -> None:
    settings = settings_for(db_url)
    demo = asyncio.run(load_demo_into(settings))
    with ExitStack() as stack:
        bases = [
            stack.enter_context(server_process(db_url, settings.secret_key, forked=True)) for _ in range(2)
        ]
        result = asyncio.run(
            create_then_read(bases, demo.api_key, str(demo.project_id), count=300, concurrency=30)
        )
    assert result.failures == []
    assert result.created == 300
    assert result.misses == []
