"""Reading a whole database for what it still holds: every row of every table, on either dialect.

The forgetting sweep (`tests/api/test_forgetting_sweep.py`) searches this for planted markers, so
it covers a table or derived store added later without a list to keep up to date.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from sqlalchemy import inspect

from orrery.db.engine import Database


def _rows_sqlite(sync: Any, marks: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every row of every table. A full-text index (an FTS5 virtual table) is read through its own
    MATCH, each hit as the row it indexes (its shadow tables are compressed index structures)."""
    virtual = dict(
        sync.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).all()
    )
    out: list[tuple[str, dict[str, Any]]] = []
    for name in inspect(sync).get_table_names():
        if any(name == v or name.startswith(f"{v}_") for v in virtual):
            continue
        result = sync.exec_driver_sql(f'SELECT * FROM "{name}"')
        out += [(name, dict(zip(result.keys(), row, strict=True))) for row in result]
    return out + _index_hits(sync, virtual, marks)


def _index_hits(
    sync: Any, virtual: dict[str, str], marks: Collection[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Each marker's matches in each full-text index (its terms as they are, or prefixed with an
    owner's key as recall's are), as the rows they index; a match whose row is gone is a leftover."""
    users = sync.exec_driver_sql("SELECT id FROM users").all()
    keys = ["", *(str(uid).replace("-", "")[:12] for (uid,) in users)]
    out: list[tuple[str, dict[str, Any]]] = []
    for name, sql in virtual.items():
        source = _indexed_table(sync, name, sql)
        for mark in marks:
            for key in keys:
                query = f'SELECT rowid FROM "{name}" WHERE "{name}" MATCH ?'
                for (rid,) in sync.exec_driver_sql(query, (f"{key}{mark}*",)).all():
                    row = sync.exec_driver_sql(f'SELECT * FROM "{source}" WHERE rowid = ?', (rid,))
                    found = row.first()
                    indexed = dict(zip(row.keys(), found, strict=True)) if found else {"rowid": rid}
                    out.append((source if found else name, {**indexed, "index": name, "match": mark}))
    return out


def _indexed_table(sync: Any, name: str, sql: str) -> str:
    """The table an FTS5 index covers: its `content=` table, else the one whose triggers fill it."""
    given = re.search(r"content\s*=\s*'(\w+)'", sql)
    if given:
        return given.group(1)
    like = f"%INSERT INTO {name}%"
    rows = sync.exec_driver_sql(
        "SELECT tbl_name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE ?", (like,)
    )
    return str(rows.scalars().first())


def _rows_postgres(sync: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every row of every table as PostgreSQL renders the whole row as text (every column, the
    `tsvector` and the binary ones included)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name in inspect(sync).get_table_names():
        result = sync.exec_driver_sql(f'SELECT t::text, to_jsonb(t) FROM "{name}" AS t')
        out += [(name, {"row": row[0], **dict(row[1])}) for row in result]
    return out


async def every_row(db: Database, marks: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every row of every table of `db` as (table, {column: value}), the schema read by inspection
    (a new table is included without naming it); on SQLite, each full-text index's hits for `marks`
    (words, matched as prefixes) as the rows they index."""
    async with db.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            return await conn.run_sync(lambda sync: _rows_sqlite(sync, marks))
        return await conn.run_sync(_rows_postgres)


def cell_text(value: Any) -> str:
    """A column's value as searchable text (bytes as Latin-1, JSON as dumped)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1")
    return value if isinstance(value, str) else json.dumps(value, default=str)
