"""SQLite: `recall_fts` without stored row sizes (`columnsize=0`), so ranking its matches is 4x cheaper.

FTS5's `bm25` read each matching row's size from the `recall_fts_docsize` table: one lookup per match,
three quarters of recall's full-text query at 50,000 messages (~5,200 matches, 3.6 of 4.9 ms; `python
-m bench.recall`). A contentless table created with `columnsize=0` stores no sizes and `bm25` then
ranks by the terms' rarity and counts alone, without BM25's length normalisation. That ranking only
picks which matches recall reads with their neighbours; every message read is ranked again in Python
with full BM25 (lengths included) and the dense score (`orrery.memory.recall.ranked`).

The table is rebuilt from `messages` with the same contents and triggers (0020rf's, which refer to it
by name and stay in place). A later migration that refills it empties it with `INSERT INTO
recall_fts(recall_fts) VALUES ('delete-all')` (a contentless table takes no `DELETE FROM`), or
recreates it with `SIZELESS` (here), then runs 0020rf's `SQLITE_FILL`. PostgreSQL needs nothing.

Revision ID: 0021rs
Revises: 0020rf
Create Date: 2026-11-29 09:00:00
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import op

revision: str = "0021rs"
down_revision: str | None = "0020rf"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RECALL_INDEX = "0020_recall_index"
SIZELESS = (
    "CREATE VIRTUAL TABLE recall_fts USING fts5(terms, chat, content='', columnsize=0, tokenize='unicode61')"
)


def _recall_index() -> Any:
    """Migration 0020rf's module (its table definition and the statement that fills it)."""
    spec = importlib.util.spec_from_file_location(
        RECALL_INDEX, Path(__file__).with_name(f"{RECALL_INDEX}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rebuild(create: str) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TABLE IF EXISTS recall_fts")
    op.execute(create)
    op.execute(_recall_index().SQLITE_FILL)


def upgrade() -> None:
    _rebuild(SIZELESS)


def downgrade() -> None:
    _rebuild(_recall_index().SQLITE_UP[0])
