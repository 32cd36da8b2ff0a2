"""Repair text that no read could answer: before every door refused it (issue 42), a lone surrogate
(`"\\ud800"`) could reach a SQLite JSON column, where it is kept as an escape and then fails every
read that serializes the row; a NUL could reach a SQLite text column; and an entry code could carry
non-ASCII digits (`HX-００1`) that no lookup finds. Each such value is rewritten: a lone surrogate
or a NUL becomes U+FFFD, and a code takes its ASCII digits (unless that code exists already).
PostgreSQL never stored any of these (it refuses them), so nothing runs there.

Revision ID: 0018hx
Revises: 0017mc
Create Date: 2026-11-27 11:00:00
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from alembic import op

revision: str = "0018hx"
down_revision: str | None = "0017mc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _repair_column(bind: Any, table: str, column: str, is_json: bool) -> None:
    found = f"instr(\"{column}\", '\\u')" if is_json else f"instr(CAST(\"{column}\" AS BLOB), x'00')"
    rows = bind.execute(sa.text(f'SELECT rowid, "{column}" FROM "{table}" WHERE {found} > 0')).all()
    for rowid, raw in rows:
        if raw is None:
            continue
        fixed = json.dumps(_clean(json.loads(raw))) if is_json else _clean(raw)
        if fixed != raw:
            bind.execute(
                sa.text(f'UPDATE "{table}" SET "{column}" = :v WHERE rowid = :r'), {"v": fixed, "r": rowid}
            )


def _repair_codes(bind: Any) -> None:
    rows = bind.execute(sa.text("SELECT id, project_id, code FROM kb_entries")).all()
    taken = {(str(p), c) for _, p, c in rows}
    for entry_id, project_id, code in rows:
        ascii_code = unicodedata.normalize("NFKC", code).upper()
        if ascii_code != code and (str(project_id), ascii_code) not in taken and ascii_code.isascii():
            bind.execute(sa.text("UPDATE kb_entries SET code = :c WHERE id = :i"), {"c": ascii_code, "i": entry_id})
            taken.add((str(project_id), ascii_code))


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    inspector = sa.inspect(bind)
    for table in inspector.get_table_names():
        if table == "alembic_version" or table.startswith("sqlite_"):
            continue
        for column in inspector.get_columns(table):
            kind = str(column["type"]).upper()
            if kind == "JSON" or kind.startswith(("VARCHAR", "TEXT")):
                _repair_column(bind, table, column["name"], kind == "JSON")
    _repair_codes(bind)


def downgrade() -> None:
    """Nothing to undo: the repaired values could never be read."""
