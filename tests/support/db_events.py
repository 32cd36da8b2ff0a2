"""What a piece of code sends to the database, seen from the engine's events: the statements it runs
and the transactions it begins (the tests that hold a path to its round trips)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from orrery.db.engine import SINGLE_OPTION, Database


@contextmanager
def count_statements(db: Database) -> Iterator[list[str]]:
    """The SQL of each statement run inside the block, but SQLite's explicit `BEGIN` (it rides with
    the first query)."""
    statements: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not statement.startswith("BEGIN"):
            statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", before)
    try:
        yield statements
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", before)


@contextmanager
def transactions_begun(db: Database) -> Iterator[list[bool]]:
    """One entry per connection begun inside the block: True for a real transaction, False for a
    `Database.single` connection (no transaction around its statements)."""
    begun: list[bool] = []

    def on_begin(conn: Any) -> None:
        begun.append(not conn.get_execution_options().get(SINGLE_OPTION))

    event.listen(db.engine.sync_engine, "begin", on_begin)
    try:
        yield begun
    finally:
        event.remove(db.engine.sync_engine, "begin", on_begin)
