"""A real `orrery serve` process a test can `kill -9` (crash recovery, the SQLite server lock)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.db.models import Message
from orrery.demo.workspace import load_demo
from tests.support.entrypoint import Forked, server_launcher
from tests.support.load import ROOT, _child_env, _cli, _wait_healthy, free_port


@dataclass
class Server:
    """A running server: its process, base URL and log."""

    proc: Forked
    base: str
    log: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, like a crash or the OOM killer."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def cli(*args: str) -> list[str]:
    """The `orrery` command line (the real entry point) with `args`."""
    return [*_cli(), *args]


@contextmanager
def killable_server(database_url: str, secret: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`orrery serve` in its own process (cwd outside the repo: no `.env`), forked from the test
    process's server launcher (`tests/support/entrypoint.py`), healthy; ended at exit unless the test
    killed it."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        args = ["serve", "--host", "127.0.0.1", "--port", str(port)]
        proc = server_launcher().spawn(args, _child_env(database_url, secret, ROOT, env), Path(tmp), log_path)
        server = Server(proc, f"http://127.0.0.1:{port}", log_path)
        try:
            _wait_healthy(proc, server.base, log_path)
            yield server
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


async def load_demo_into(settings: Settings) -> Any:
    """The demo workspace, loaded into the database a server process will serve."""
    db = Database.from_settings(settings)
    try:
        return await load_demo(db, settings.secret_key)
    finally:
        await db.dispose()


async def stored_messages(settings: Settings, sid: str) -> list[tuple[str, str, str]]:
    """(role, content, status) of a session's messages, in order, as the server process stored them."""
    db = Database.from_settings(settings)
    try:
        async with db.sessions() as s:
            rows = await s.execute(
                select(Message.role, Message.content, Message.status)
                .where(Message.session_id == uuid.UUID(sid))
                .order_by(Message.seq)
            )
            return [(r.role, r.content, r.status) for r in rows]
    finally:
        await db.dispose()
