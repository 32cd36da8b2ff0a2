"""Declarative base, naming convention and portable column types.

The naming convention makes constraint names identical on SQLite and PostgreSQL, which Alembic
needs to alter or drop them. `UTCDateTime` guarantees aware UTC datetimes on both dialects
(SQLite drops the offset on its own).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import JSON, DateTime, MetaData, Uuid
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JSONType = JSON().with_variant(JSONB(), "postgresql")
"""JSON on SQLite, JSONB on PostgreSQL."""


CLOCK_OFFSET = timedelta(0)
"""Added to `utcnow()`: always zero in use. The test suite's clock hook (`ORRERY_TEST_CLOCK_OFFSET_MINUTES`,
tests/conftest.py) advances it to show that no test depends on how long the run has lasted."""


def utcnow() -> datetime:
    """The current time as an aware UTC datetime (the app's one clock: every stamp and age uses it)."""
    return datetime.now(UTC) + CLOCK_OFFSET


def conflict_insert(dialect: str, entity: Any) -> Any:
    """`INSERT` into `entity` as `dialect` builds it, with `on_conflict_do_nothing` / `_do_update`
    (both dialects have them; the generic `insert` has neither)."""
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(entity)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware timestamp stored as UTC and always read back as aware UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Base class of every ORM model."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: dict[Any, Any] = {
        datetime: UTCDateTime(),
        uuid.UUID: Uuid(),
        dict[str, Any]: JSONType,
        list[Any]: JSONType,
    }


class UUIDPrimaryKey:
    """Mixin: a random UUID primary key."""

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)


class Timestamps:
    """Mixin: created/updated timestamps maintained by the ORM."""

    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
