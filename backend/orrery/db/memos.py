"""Writes a read left behind, applied later in a write transaction.

A turn assembles its context in a read-only session (`ReadOnlySession` skips flushes), so assembly
never holds the write lock. What assembly changes on its rows — a memo such as the knowledge
decision, a running summary, the active agent and its transition — is taken from that session as
`Memo`s and written with the turn's reply, in the transaction that stores it: each change as one
Core statement of the changed columns only, so a column another request changed meanwhile is not
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, inspect, update
from sqlalchemy.ext.asyncio import AsyncSession


@dataclass(frozen=True)
class Memo:
    """One row change: an insert of a new row's values, or an update of changed columns by key."""

    model: type[Any]
    values: dict[str, Any]
    key: dict[str, Any] | None = None
    """The primary key of the row to update (None: insert)."""
    delete: bool = False
    """Delete the row `key` names instead (a suspended turn's row, with the reply that ends it)."""


def pending_memos(session: AsyncSession) -> list[Memo]:
    """The rows added to `session` and the columns changed on its rows, not yet written."""
    sync = session.sync_session
    memos = [_inserted(obj) for obj in sync.new]
    memos += [m for m in (_updated(obj) for obj in sync.dirty) if m is not None]
    return memos


def _inserted(obj: Any) -> Memo:
    mapper = inspect(obj).mapper
    values = {a.key: getattr(obj, a.key) for a in mapper.column_attrs if a.key in obj.__dict__}
    return Memo(mapper.class_, values)


def _updated(obj: Any) -> Memo | None:
    state = inspect(obj)
    changed = {
        a.key: state.attrs[a.key].value
        for a in state.mapper.column_attrs
        if state.attrs[a.key].history.has_changes()
    }
    if not changed:
        return None
    key = {
        prop.key: getattr(obj, prop.key)
        for prop in (state.mapper.get_property_by_column(c) for c in state.mapper.primary_key)
    }
    return Memo(state.mapper.class_, changed, key)


async def write_memos(session: AsyncSession, memos: list[Memo]) -> None:
    """Apply the memos in the caller's write transaction, inserts first (an update may refer to one)."""
    for memo in sorted(memos, key=lambda m: m.key is not None):
        if memo.key is None:
            await session.execute(insert(memo.model).values(**memo.values))
        else:
            where = [getattr(memo.model, k) == v for k, v in memo.key.items()]
            if memo.delete:
                await session.execute(delete(memo.model).where(*where))
                continue
            statement = update(memo.model).where(*where).values(**memo.values)
            await session.execute(statement.execution_options(synchronize_session=False))
