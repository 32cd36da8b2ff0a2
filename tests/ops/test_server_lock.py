"""SQLite serves one server process per file: a second `orrery serve` on the same file is refused
with a message pointing to PostgreSQL, short commands still work beside the server, and the guard (an
OS file lock) dies with its process, so a server killed with SIGKILL leaves nothing stale behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from orrery.ops.server_lock import lock_path, sqlite_file
from tests.conftest import DIALECTS, settings_for
from tests.support.entrypoint import server_launcher
from tests.support.killable import cli, killable_server
from tests.support.load import ROOT, _orrery_env, free_port

pytestmark = [
    pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite only"),
    pytest.mark.parametrize("db_url", ["sqlite"], indirect=True),
]


def _orrery(db_url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`orrery ARGS` in its own process, forked from the test process's launcher (a cold one cost
    ~3 CPU-s of imports); the lock is the OS's, held by the server process, not by the launcher."""
    env = _orrery_env(db_url, "test-secret", ROOT, None)
    code, stdout, stderr = server_launcher().run_split(list(args), env=env)
    return subprocess.CompletedProcess([*cli(*args)], code, stdout, stderr)


def test_a_second_server_on_one_sqlite_file_is_refused_until_the_first_dies(
    db_url: str, tmp_path: Path
) -> None:
    with killable_server(db_url, "test-secret") as first:
        second = _orrery(db_url, tmp_path, "serve", "--host", "127.0.0.1", "--port", str(free_port()))
        said = second.stdout + second.stderr
        assert second.returncode == 2, said
        assert "already serves" in said and "PostgreSQL" in " ".join(said.split())
        # short commands take no server lock: they run beside the server
        assert _orrery(db_url, tmp_path, "db", "upgrade").returncode == 0
        listed = _orrery(db_url, tmp_path, "sessions", "list", "--user", "nobody@example.com")
        assert "already serves" not in listed.stdout + listed.stderr
        assert httpx.get(f"{first.base}/health").status_code == 200  # the first still serves
        first.kill()  # the kernel releases its lock: nothing stale, unlike a pid file
    with killable_server(db_url, "test-secret") as again:
        assert httpx.get(f"{again.base}/health").status_code == 200


def test_the_lock_file_sits_beside_the_database(db_url: str) -> None:
    database = sqlite_file(settings_for(db_url))
    assert database is not None and database.exists()
    assert lock_path(database) == database.with_name(database.name + ".server.lock")
    assert sqlite_file(settings_for("sqlite+aiosqlite:///:memory:")) is None
    assert os.sep in str(database)
