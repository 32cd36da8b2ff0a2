"""One server process per SQLite file, guarded by an OS file lock that dies with its process.

SQLite serializes turns per session only inside one process (an asyncio lock), and an
Idempotency-Key only inside one process's turn lock, so a second server on the same file would run
one key's model twice and interleave turns. `orrery serve` therefore takes an exclusive `flock` on
`<database>.server.lock` beside the file: the kernel releases it when the process ends, however it
ends (`kill -9` included), so it never goes stale the way a pid file does. Other commands (migrate,
demo load, eval, context show...) never take it: they are short, and `BEGIN IMMEDIATE` serializes
their writes with the server's.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

from orrery.config import Settings
from orrery.errors import OrreryError

_held: list[IO[bytes]] = []
"""The open lock files of this process (kept open: closing one releases its lock)."""


class ServerLockError(OrreryError):
    """Another server process already serves this SQLite file."""


def sqlite_file(settings: Settings) -> Path | None:
    """The SQLite database file, or None (PostgreSQL, or an in-memory database)."""
    if settings.dialect != "sqlite":
        return None
    name = make_url(settings.database_url).database
    if not name or name == ":memory:" or name.startswith("file::memory:"):
        return None
    return Path(name).resolve()


def lock_path(database: Path) -> Path:
    """The lock file beside the database (the database file itself is SQLite's to lock)."""
    return database.with_name(database.name + ".server.lock")


def hold_server_lock(settings: Settings) -> Path | None:
    """Take this process's exclusive server lock on the SQLite file (None on PostgreSQL), or raise
    `ServerLockError` at once if another process holds it."""
    database = sqlite_file(settings)
    if database is None:
        return None
    path = lock_path(database)
    handle = open(path, "ab")  # noqa: SIM115 - held open for the life of the process
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ServerLockError(
            f"another `orrery serve` already serves {database} (it holds {path.name}); SQLite serves "
            "one server process: stop the other one, or run several processes on PostgreSQL "
            "(DATABASE_URL=postgresql+asyncpg://...)"
        ) from None
    _held.append(handle)
    return path
