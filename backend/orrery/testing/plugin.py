"""The pytest plugin behind `orrery.testing` (entry point `pytest11: orrery`).

Fixtures are prefixed `orrery_` so they never shadow a project's own. Databases are SQLite files by
default; set `ORRERY_TESTKIT_DATABASE_URL` (or pass `--orrery-database-url`) to a PostgreSQL server
URL (`postgresql+asyncpg://user@host:5432/postgres`) to run them there, one new database per test.
Everything heavy is imported inside the fixtures, so loading the plugin costs nothing.

The async fixtures are pytest-asyncio fixtures, so they work in its default strict mode (mark your
tests `@pytest.mark.asyncio`) and in auto mode alike. They run in the loop of your
`asyncio_default_fixture_loop_scope`, which must match your tests' loop; leaving it unset makes
pytest-asyncio warn (`PytestDeprecationWarning: ... "asyncio_default_fixture_loop_scope" is unset`)
in every run, so set it next to the mode:

```toml
[tool.pytest.ini_options]
asyncio_mode = "auto"                          # async tests without a marker
asyncio_default_fixture_loop_scope = "function"  # each test and its fixtures share one loop
```
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

try:
    from pytest_asyncio import fixture as async_fixture
except ImportError:  # without pytest-asyncio the async fixtures cannot run, but loading must not fail
    async_fixture = pytest.fixture  # type: ignore[assignment]

ENV_URL = "ORRERY_TESTKIT_DATABASE_URL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--orrery-database-url",
        default=None,
        help=f"PostgreSQL server for Orrery's test fixtures (default: ${ENV_URL}, else SQLite files)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register plugins once per test process, as the app does at start-up, so code under test that
    builds an `Orchestrator` or resolves a strategy directly sees the same agents, tools and
    strategies a server would."""
    from orrery.plugins import ensure_plugins

    ensure_plugins()


@dataclass(frozen=True)
class KitUser:
    """A user with a project and an API key (the plaintext, for Authorization headers)."""

    id: uuid.UUID
    email: str
    api_key: str
    project_id: uuid.UUID


def _blocking(coro: Any) -> Any:
    with ThreadPoolExecutor(1) as pool:  # off any running loop: Alembic runs its own
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="session")
def orrery_server_url(request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL server the fixtures use, or None for SQLite files."""
    value = request.config.getoption("--orrery-database-url") or os.environ.get(ENV_URL)
    return str(value) if value else None


@pytest.fixture(scope="session")
def orrery_template(orrery_server_url: str | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated template, made once per test session and copied for each test."""
    from orrery.testing.database import drop_template, migrated_template

    template = _blocking(migrated_template(orrery_server_url, tmp_path_factory.mktemp("orrery")))
    yield template
    _blocking(drop_template(orrery_server_url, template))


@async_fixture
async def orrery_database_url(
    orrery_server_url: str | None, orrery_template: str, tmp_path: Path
) -> AsyncIterator[str]:
    """A fresh, migrated database for this test (removed afterwards)."""
    from orrery.testing.database import throwaway_database

    async with throwaway_database(orrery_server_url, directory=tmp_path, template=orrery_template) as url:
        yield url


@pytest.fixture
def orrery_settings(orrery_database_url: str) -> Any:
    """Settings for the throwaway database: no `.env`, a test secret, no background summaries."""
    from orrery.config import Settings

    return Settings(
        _env_file=None,
        database_url=orrery_database_url,
        env="test",
        secret_key="orrery-testing",
        pattern_refresh_minutes=0,
        plugins=os.environ.get("ORRERY_PLUGINS", ""),
    )


@async_fixture
async def orrery_db(orrery_settings: Any) -> AsyncIterator[Any]:
    """A `Database` on the throwaway database (plugins loaded, linked cache empty)."""
    from orrery.db.engine import Database
    from orrery.plugins import ensure_plugins
    from orrery.repo.linked_cache import linked_cache

    ensure_plugins(orrery_settings)
    linked_cache.clear()
    database = Database.from_settings(orrery_settings)
    yield database
    await database.dispose()


@async_fixture
async def orrery_user(orrery_db: Any, orrery_settings: Any) -> KitUser:
    """A minimal workspace: one user, one project, one API key."""
    from orrery.repo import identity

    email = f"dev-{uuid.uuid4().hex[:8]}@example.org"
    async with orrery_db.transaction() as s:
        user = await identity.create_user(s, email, "Dev")
        project = await identity.create_project(s, user.id, "Test project")
        _, key = await identity.issue_api_key(s, user.id, "tests", orrery_settings.secret_key)
    return KitUser(user.id, email, key, project.id)


@async_fixture
async def orrery_demo(orrery_db: Any, orrery_settings: Any) -> Any:
    """The demo workspace (Maya Chen, Atlas 2.0): `.user_id`, `.project_id`, `.api_key`, `.focus`."""
    from orrery.demo.workspace import load_demo

    return await load_demo(orrery_db, orrery_settings.secret_key)


@pytest.fixture
def orrery_model() -> Any:
    """The model every turn uses; override this fixture (or set `orrery_orchestrator.model`)."""
    from orrery.testing.models import ScriptedModel

    return ScriptedModel()


@async_fixture
async def orrery_orchestrator(orrery_db: Any, orrery_settings: Any, orrery_model: Any) -> AsyncIterator[Any]:
    """A `TestOrchestrator` on the throwaway database with the injectable `orrery_model`."""
    from orrery.testing.chat import TestOrchestrator

    orchestrator = TestOrchestrator(orrery_db, orrery_settings, orrery_model)
    yield orchestrator
    await orchestrator.drain()


@async_fixture
async def orrery_client(
    orrery_settings: Any, orrery_orchestrator: Any, orrery_user: KitUser
) -> AsyncIterator[Any]:
    """An `httpx.AsyncClient` over the ASGI app, authorized as `orrery_user`, chatting through
    `orrery_orchestrator` (so its model is the injected one)."""
    import httpx

    from orrery.app.http import create_app

    app = create_app(orrery_settings)
    async with app.router.lifespan_context(app):
        app.state.orchestrator = orrery_orchestrator
        headers = {"Authorization": f"Bearer {orrery_user.api_key}"}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://orrery", headers=headers
        ) as client:
            yield client
