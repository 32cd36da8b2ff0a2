"""A SQLite database that cannot be written (its file, its `-wal`, or its folder) is one clear line at
start-up, and `/health` answers 503 `read_only` naming it, not 200 with a 503 behind every write;
it answers 200 again as soon as the file is writable (issue 53).

The file is made unwritable for real: `chmod`, and as root (whom modes do not stop) the immutable
attribute (`chattr +i`), which stops root too."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orrery.app.http import create_app
from orrery.db.writable import unwritable
from tests.conftest import DIALECTS, settings_for
from tests.support.serving import serving

pytestmark = pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite only")


def _lock(path: Path, locked: bool) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i" if locked else "-i", str(path)], check=True, capture_output=True)
    else:
        mode = 0o555 if path.is_dir() else 0o444
        path.chmod(mode if locked else (0o755 if path.is_dir() else 0o644))


@pytest.fixture
def read_only(tmp_path: Path, sqlite_demo_template: Path) -> Iterator[tuple[Path, Any]]:
    """A copy of the demo database, and a function that locks or unlocks a path (unlocked after)."""
    if os.geteuid() == 0 and shutil.which("chattr") is None:
        pytest.skip("as root only the immutable attribute makes a file unwritable, and chattr is missing")
    path = tmp_path / "data" / "orrery.db"
    path.parent.mkdir()
    shutil.copy(sqlite_demo_template, path)
    locked: list[Path] = []

    def lock(target: Path, on: bool = True) -> None:
        _lock(target, on)
        (locked.append if on else locked.remove)(target)

    yield path, lock
    for target in locked:
        _lock(target, False)


async def test_a_read_only_file_is_one_line_at_start_and_health_says_so_until_writable(
    read_only: tuple[Path, Any], caplog: pytest.LogCaptureFixture
) -> None:
    path, lock = read_only
    settings = settings_for(f"sqlite+aiosqlite:///{path}")
    lock(path)
    app = create_app(settings)
    with caplog.at_level("WARNING", logger="orrery.app"):
        async with serving(app, "") as api:
            locked = await api.get("/health")
            lock(path, False)
            unlocked = await api.get("/health")
    [line] = [r.getMessage() for r in caplog.records if r.name == "orrery.app"]
    assert f"the SQLite file {path} is read-only" in line and "every write is a 503" in line
    assert locked.status_code == 503 and locked.headers["retry-after"] == "30"
    assert locked.json()["status"] == "read_only" and str(path) in locked.json()["reason"]
    assert unlocked.status_code == 200 and unlocked.json()["status"] == "ok"


def test_a_read_only_wal_or_folder_is_named(read_only: tuple[Path, Any]) -> None:
    path, lock = read_only
    url = f"sqlite+aiosqlite:///{path}"
    assert unwritable(url) is None
    wal = Path(f"{path}-wal")
    wal.write_bytes(b"")
    lock(wal)
    assert unwritable(url) == f"the SQLite file {wal} is read-only"
    lock(wal, False)
    wal.unlink()
    lock(path.parent)
    assert "the folder" in (unwritable(url) or "") and str(path.parent) in (unwritable(url) or "")
    lock(path.parent, False)
    assert unwritable(url) is None
    assert unwritable("postgresql+asyncpg://u@h/db") is None
