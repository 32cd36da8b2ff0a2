"""Per-user limits hold across app instances (two engines on one database): 429 with `Retry-After`
and the error shape, and a refused turn stores nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message, UsageCounter
from orrery.ops import limits
from tests.ops.conftest import focused_session
from tests.support.serving import serving
from tests.support.web import sign_in

JSON = {"Accept": "application/json"}


class Clock:
    """The limits module's notion of now, moved by the test (windows are minutes and UTC days)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fixed = Clock(datetime(2026, 11, 22, 10, 15, 20, tzinfo=UTC))
    monkeypatch.setattr(limits, "utcnow", fixed)
    return fixed


@asynccontextmanager
async def two_instances(
    settings: Settings, api_key: str
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Two apps, each with its own engine and pool, on one database (as two workers would be)."""
    async with serving(create_app(settings), api_key) as a, serving(create_app(settings), api_key) as b:
        assert a._transport.app.state.db is not b._transport.app.state.db  # type: ignore[attr-defined]
        yield a, b


async def message_count(db: Database) -> int:
    async with db.sessions() as s:
        return int((await s.execute(select(func.count()).select_from(Message))).scalar_one())


async def turn(api: httpx.AsyncClient, sid: str, text: str) -> httpx.Response:
    return await api.post(f"/v1/sessions/{sid}/messages", json={"content": text}, headers=JSON)


async def test_turns_per_minute_are_shared_by_two_app_instances(
    settings: Settings, demo: Any, db: Database, clock: Clock
) -> None:
    limited = settings.model_copy(update={"limit_turns_per_minute": 2})
    async with (
        serving(create_app(limited), demo.api_key) as a,
        serving(create_app(limited), demo.api_key) as b,
    ):
        sid = await focused_session(a, demo)
        assert (await turn(a, sid, "first")).status_code == 200
        assert (await turn(b, sid, "second")).status_code == 200
        stored = await message_count(db)

        refused = await turn(a, sid, "third")
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "40"  # the window ends at 10:16:00
        assert refused.json()["error"]["code"] == "rate_limited"
        assert "2 turns per minute" in refused.json()["error"]["message"]
        streamed = await b.post(f"/v1/sessions/{sid}/messages", json={"content": "third, streamed"})
        assert streamed.status_code == 429 and streamed.headers["Retry-After"] == "40"
        assert await message_count(db) == stored  # nothing stored for refused turns

        clock.now += timedelta(minutes=1)
        assert (await turn(b, sid, "next minute")).status_code == 200
        async with db.sessions() as s:
            counter = (
                await s.execute(select(UsageCounter).where(UsageCounter.period == "minute"))
            ).scalar_one()
        assert counter.count == 1  # the new window started over; refused turns were never counted


async def test_tokens_per_day_refuse_until_midnight_utc(
    settings: Settings, demo: Any, db: Database, clock: Clock
) -> None:
    limited = settings.model_copy(update={"limit_tokens_per_day": 50})
    async with (
        serving(create_app(limited), demo.api_key) as a,
        serving(create_app(limited), demo.api_key) as b,
    ):
        sid = await focused_session(a, demo)
        first = await turn(a, sid, "What is this task blocked by?")
        assert first.status_code == 200
        used = first.json()["usage"]["input_tokens"] + first.json()["usage"]["output_tokens"]
        assert used >= 50  # the offline model's prompt alone is larger than this small limit
        stored = await message_count(db)

        refused = await turn(b, sid, "and now?")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        assert int(refused.headers["Retry-After"]) == int(
            (datetime(2026, 11, 23, tzinfo=UTC) - clock.now).total_seconds() + 1
        )
        assert await message_count(db) == stored

        clock.now += timedelta(days=1)
        assert (await turn(b, sid, "a new day")).status_code == 200


async def test_limits_are_off_by_default(api: httpx.AsyncClient, demo: Any, db: Database) -> None:
    sid = await focused_session(api, demo)
    for n in range(3):
        assert (await turn(api, sid, f"turn {n}")).status_code == 200
    async with db.sessions() as s:
        assert (await s.execute(select(func.count()).select_from(UsageCounter))).scalar_one() == 0


async def test_the_terminal_chat_says_why_a_turn_was_refused_and_goes_on(
    settings: Settings, demo: Any, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from orrery.cli import app as cli_app
    from orrery.config import get_settings
    from tests.conftest import in_thread

    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", settings.secret_key)
    monkeypatch.setenv("ORRERY_LIMIT_TURNS_PER_MINUTE", "1")
    get_settings.cache_clear()
    try:
        session = in_thread(
            CliRunner().invoke,
            cli_app,
            ["chat", "--demo"],
            "What is this task blocked by?\nand now?\n/quit\n",
        )
        once = in_thread(CliRunner().invoke, cli_app, ["chat", "--demo", "--once", "one more?"])
    finally:
        get_settings.cache_clear()
    assert session.exit_code == 0, session.output
    assert "get_linked_entities" in session.output and "limit of 1 turns per minute reached" in session.output
    assert once.exit_code == 1 and "limit of 1 turns per minute reached" in once.output


async def test_the_web_app_answers_429_with_retry_after(
    settings: Settings, demo: Any, db: Database, clock: Clock
) -> None:
    import re

    limited = settings.model_copy(update={"limit_turns_per_minute": 1})
    app = create_app(limited)
    async with serving(app, demo.api_key) as api:
        assert (await sign_in(api, demo.api_key)).status_code == 303
        page = await api.get("/", follow_redirects=True)
        csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
        assert csrf is not None
        headers = {"X-CSRF-Token": csrf.group(1)}
        sid = await focused_session(api, demo)
        first = await api.post(f"/s/{sid}/turn", json={"content": "hi"}, headers=headers)
        assert first.status_code == 200 and "event: done" in first.text
        stored = await message_count(db)
        refused = await api.post(f"/s/{sid}/turn", json={"content": "again"}, headers=headers)
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "40"
        assert "1 turns per minute" in refused.text and await message_count(db) == stored
