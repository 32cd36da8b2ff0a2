"""Whether a SQLite database can be written: the file, its `-wal` and `-journal` companions, and the
folder SQLite creates them in.

A read-only file or folder used to show only as 503s on every write behind a `/health` that said 200
(issue 53). The check is a few `os.access` calls, cheap enough for every `/health`; it reflects the
file system now, so the answer recovers as soon as the files are writable again. PostgreSQL and an
in-memory SQLite are always "writable" here (the server says otherwise per statement).
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names (None: another dialect, or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def unwritable(url: str) -> str | None:
    """Why the database at `url` cannot be written, in one line (None: it can)."""
    path = sqlite_file(url)
    if path is None:
        return None
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists() and not os.access(path, os.W_OK):
        return f"the SQLite file {path} is read-only"
    for companion in (Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        if companion.exists() and not os.access(companion, os.W_OK):
            return f"the SQLite file {companion} is read-only"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} of the SQLite database is read-only (SQLite writes its -wal there)"
    return None
