"""Fixtures for the browser tests: one real uvicorn process on a fresh SQLite workspace and one
Chromium, shared by the tests of a module. Module-scoped, not session-scoped: Playwright's sync API
keeps an event loop running while it is open, and the async tests of other modules must not run
inside it, so every browser test lives in test_browser.py."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.migrations import upgrade
from orrery.demo.workspace import load_demo
from orrery.repo import chat, identity
from tests.conftest import in_thread, settings_for
from tests.support.entrypoint import server_launcher
from tests.support.factories import make_user
from tests.support.patience import BROWSER_WAIT_MS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
UVICORN = "import runpy\nrunpy.run_module('uvicorn', run_name='__main__', alter_sys=True)"
"""`python -m uvicorn` as a program for `python -c`."""


@dataclass(frozen=True)
class Server:
    url: str
    api_key: str
    foreign_session: str
    db_url: str


async def _workspace(settings: Settings) -> tuple[str, str]:
    demo = await load_demo(Database.from_settings(settings), settings.secret_key)
    db = Database.from_settings(settings)
    try:
        async with db.transaction() as s:
            eve = await make_user(s, "Eve")
            project = await identity.create_project(s, eve.id, "Eve's plans")
            theirs = await chat.create_session(s, eve.id, project_id=project.id, title="Eve's secret")
        return demo.api_key, str(theirs.id)
    finally:
        await db.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('web') / 'orrery.db'}"
    in_thread(upgrade, url)
    api_key, foreign = in_thread(asyncio.run, _workspace(settings_for(url)))
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "ORRERY_ENV": "test",
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_MODEL": "offline",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    # `python -m uvicorn ...` in its own process, forked from the test process's launcher (a cold
    # start cost ~4 CPU-s of imports)
    args = ["orrery.app.http:create_app", "--factory", "--host", "127.0.0.1", "--port", str(port)]
    log = tmp_path_factory.mktemp("web-server") / "server.log"
    process = server_launcher().spawn([*args, "--log-level", "warning"], env, ROOT, log, code=UVICORN)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                pytest.fail(f"the server exited during startup:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        else:
            pytest.fail(f"the server did not answer /health:\n{log.read_text()[-3000:]}")
        yield Server(base, api_key, foreign, url)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def page(server: Server) -> Iterator[Page]:
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        pytest.fail("Chromium is missing: apt-get install chromium (.ci/run installs it)", pytrace=False)
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1360, "height": 900},
            base_url=server.url,
        )
        context.set_default_timeout(BROWSER_WAIT_MS)  # hang guards: a busy machine is slow, not wrong
        expect.set_options(timeout=BROWSER_WAIT_MS)
        tab = context.new_page()
        errors: list[str] = []
        tab.on(
            "console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None
        )
        tab.on("pageerror", lambda e: errors.append(str(e)))
        yield tab
        assert errors == [], "browser console errors (CSP violations show up here)"
        context.close()
