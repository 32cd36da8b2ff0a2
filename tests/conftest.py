"""Shared fixtures: every database test runs on SQLite and on a real, throwaway PostgreSQL.

`ORRERY_TEST_DIALECTS=sqlite` narrows a local run; CI always runs both. PostgreSQL failing to start
fails the run (it is never skipped).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import logging
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from pydantic_ai import models
from sqlalchemy import delete

from orrery.config import Settings
from orrery.db import base as db_base
from orrery.db.engine import Database
from orrery.db.migrations import upgrade
from orrery.db.models import ApiKey
from orrery.demo.workspace import load_demo
from orrery.memory.history_cache import history_cache
from orrery.repo.linked_cache import linked_cache
from tests.support.postgres import PostgresUnavailable, ThrowawayPostgres
from tests.support.serving import serving

models.ALLOW_MODEL_REQUESTS = False  # no test ever reaches a real LLM

RAM_TMP = Path("/dev/shm")
RAM_TMP_FREE = 2 * 1024**3
"""The run keeps ~0.2-0.5 GB there (PostgreSQL's data, pytest's last three base folders); a smaller
/dev/shm (a container's 64 MB default) is left alone, so the disk is used as before."""


def _temp_files_in_memory() -> None:
    """Unless TMPDIR is set, put the run's temporary files in /dev/shm (memory) when it is a writable
    folder: the throwaway PostgreSQL's data, each test's `tmp_path` (SQLite files), the servers' and
    the browser's scratch. On the CI machine's disk, creating and copying files costs ~10x the CPU:
    a PostgreSQL test's `CREATE DATABASE ... TEMPLATE` + `DROP` ~0.34 CPU-s of the server against
    ~0.03. Set here, at the first import of this file, before pytest picks its base temporary folder
    and before the xdist processes (which inherit the environment) start."""
    if os.environ.get("TMPDIR") or not (RAM_TMP.is_dir() and os.access(RAM_TMP, os.W_OK | os.X_OK)):
        return
    if shutil.disk_usage(RAM_TMP).free < RAM_TMP_FREE:
        return
    os.environ["TMPDIR"] = str(RAM_TMP)
    tempfile.tempdir = None  # recomputed from TMPDIR on the next use


_temp_files_in_memory()


def _end_without_teardown() -> None:
    """A test process's last exit step: leave with `os._exit` instead of the interpreter's teardown.

    Freeing every object of a process that ran hundreds of tests cost each pytest-xdist worker
    seconds of CPU after its last test (~6-10 s of wall on the CI machine, during which `make test`
    only waited: the controller gives a worker 10 s to exit, then kills it). The worker's results
    are sent, its fixtures torn down and the other exit handlers (registered later, so run earlier)
    done by then; logs and stdio are flushed here."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


if os.environ.get("PYTEST_XDIST_WORKER"):
    atexit.register(_end_without_teardown)  # at import: after the test process's other exit handlers

T = TypeVar("T")
DIALECTS = [
    d.strip() for d in os.environ.get("ORRERY_TEST_DIALECTS", "sqlite,postgresql").split(",") if d.strip()
]


def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run blocking work (Alembic, asyncio.run) off the test's event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[ThrowawayPostgres]:
    server = ThrowawayPostgres()
    try:
        server.start()
    except PostgresUnavailable as exc:
        pytest.fail(f"PostgreSQL could not be started: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    in_thread(upgrade, f"sqlite+aiosqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def pg_template(pg_server: ThrowawayPostgres) -> str:
    pg_server.run("CREATE DATABASE orrery_template")
    in_thread(upgrade, pg_server.url("orrery_template"))
    return "orrery_template"


CLOCK_OFFSET_ENV = "ORRERY_TEST_CLOCK_OFFSET_MINUTES"
"""Set (e.g. to 60) to run tests with the app's clock (`utcnow`) that many minutes ahead of the one the
session templates were built with: as if the run had lasted that long before each test. A test that
compares the wall clock with fixture times then fails; none may."""


@pytest.fixture(autouse=True)
def _advanced_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    minutes = os.environ.get(CLOCK_OFFSET_ENV)
    if minutes:
        monkeypatch.setattr(db_base, "CLOCK_OFFSET", timedelta(minutes=float(minutes)))


@contextlib.contextmanager
def _run_start_clock() -> Iterator[None]:
    """The clock as it was when the run began (the templates are built once, at its start)."""
    saved, db_base.CLOCK_OFFSET = db_base.CLOCK_OFFSET, timedelta(0)
    try:
        yield
    finally:
        db_base.CLOCK_OFFSET = saved


async def _load_demo_template(url: str) -> None:
    """Load the demo into a template database, then drop its API key (each test's `demo` issues
    its own), so a copy holds what a fresh `load_demo` would write, minus the key."""
    database = Database.from_settings(settings_for(url))
    try:
        await load_demo(database, "template-secret")
        async with database.transaction() as session:
            await session.execute(delete(ApiKey))
    finally:
        await database.dispose()


@pytest.fixture(scope="session")
def sqlite_demo_template(sqlite_template: Path) -> Path:
    path = sqlite_template.with_name("demo-template.db")
    shutil.copy(sqlite_template, path)
    with _run_start_clock():
        in_thread(asyncio.run, _load_demo_template(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def pg_demo_template(pg_server: ThrowawayPostgres, pg_template: str) -> str:
    pg_server.copy_database("orrery_demo_template", pg_template)
    with _run_start_clock():
        in_thread(asyncio.run, _load_demo_template(pg_server.url("orrery_demo_template")))
    return "orrery_demo_template"


def _template_name(request: pytest.FixtureRequest, dialect: str) -> str:
    """The migrated template, or the demo-loaded one when the test asks for `demo` or is marked
    `demo_db` (loading the demo costs ~1 s of CPU per test; copying a loaded database costs
    milliseconds, and `load_demo` on the copy only finds the demo and issues a key)."""
    demo = "demo" in request.fixturenames or request.node.get_closest_marker("demo_db") is not None
    return f"{dialect}_demo_template" if demo else f"{dialect}_template"


def _new_database(request: pytest.FixtureRequest, tmp_path: Path, template: bool) -> Iterator[str]:
    if request.param == "sqlite":
        path = tmp_path / "orrery.db"
        if template:
            shutil.copy(request.getfixturevalue(_template_name(request, "sqlite")), path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    name = f"t_{uuid.uuid4().hex[:16]}"
    if template:
        server.copy_database(name, request.getfixturevalue(_template_name(request, "pg")))
    else:
        server.run(f"CREATE DATABASE {name}")
    yield server.url(name)
    server.run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session", params=DIALECTS)
def orrery_server_url(request: pytest.FixtureRequest) -> str | None:
    """The shipped testing kit's `orrery_*` fixtures run on each dialect here too (None: SQLite)."""
    if request.param == "sqlite":
        return None
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    return server.url("postgres")


@pytest.fixture(params=DIALECTS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh, migrated database on each dialect."""
    yield from _new_database(request, tmp_path, template=True)


@pytest.fixture(params=DIALECTS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh database with no schema at all, on each dialect."""
    yield from _new_database(request, tmp_path, template=False)


def settings_for(url: str, **overrides: Any) -> Settings:
    """Settings for tests: no `.env`, a fixed secret."""
    return Settings(_env_file=None, database_url=url, env="test", secret_key="test-secret", **overrides)  # type: ignore[call-arg]


@pytest.fixture
def settings(db_url: str) -> Settings:
    return settings_for(db_url)


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    """A `Database` on a fresh, migrated database of each dialect (and an empty linked cache)."""
    linked_cache.clear()
    history_cache.clear()
    database = Database.from_settings(settings)
    yield database
    await database.dispose()


@pytest.fixture
async def demo(db: Database, settings: Settings) -> Any:
    """The demo workspace loaded into `db` (its ids, the focus entities and an API key).

    `db` is then a copy of the demo-loaded template, so this call only finds the demo and issues
    the key (`created` is False)."""
    return await load_demo(db, settings.secret_key)


@pytest.fixture
async def api(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client on the app over the demo workspace, signed in as the demo user."""
    from orrery.app.http import create_app

    async with serving(create_app(settings), demo.api_key) as client:
        yield client


LONG_FILES = (
    "test_cli_entrypoint.py",
    "test_load.py",
    "test_schema_fuzz.py",
    "test_web_app.py",
    "test_idempotency_everywhere.py",
    "test_context_builder.py",
    "test_kit.py",
    "test_context_builder_doors.py",
    "test_door.py",
    "test_browser.py",
    "test_package.py",
    "test_cli.py",
    "test_multiprocess.py",
    "test_crash_recovery.py",
    "test_docs_examples.py",
    "test_hostile_input.py",
    "test_cli_context.py",
    "test_read_your_writes.py",
    "test_orchestrator.py",
    "test_focus_answers.py",
)
"""Files that run long (subprocesses, servers, conformance runs), longest first, from a full `make
test` run's per-file times (forked servers, commands and MCP stdio servers): collected first, so
that `make test`'s processes (one file each at a time, the next file to whichever is free) start
them early and end on short files instead."""


GC_THRESHOLD = (10_000, 10, 10)
"""The cyclic collector's thresholds in a test process (Python's are 700, 10, 10): with the freezes
below, its passes cost a test process ~5% of its CPU, against ~14% before (measured on 211 tests)."""
gc.set_threshold(*GC_THRESHOLD)


def _collect_and_freeze() -> None:
    """Collect the garbage so far, then freeze what survives (`gc.freeze`): the collector's passes no
    longer walk it. A test process's heap grows to ~2 million live objects (imported modules, caches,
    session fixtures); a full pass over them cost ~0.7 s, dozens of times a run. Frozen objects still
    die by reference counting; only a reference cycle among them is never collected."""
    gc.collect()
    gc.freeze()


def pytest_collection_finish() -> None:
    _collect_and_freeze()  # what the imports and the collection made


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a file's last test, its module fixtures torn down: what the file left is collected here,
    where an exception a finalizer raises is reported against its last test, then the rest frozen."""
    if nextitem is not None and nextitem.path != item.path:
        _collect_and_freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long files first, longest first; the rest keeps its order."""
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))
