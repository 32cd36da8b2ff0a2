"""A turn's hot statements, run on the driver: SQLAlchemy compiles them, once per process.

Through SQLAlchemy's `Connection` a statement costs ~0.1–0.15 ms of CPU more than the driver's
own call (execution context, result metadata, events, a greenlet switch each way; `python -m
bench.direct`), and loading ORM objects more again; a chat turn runs about seven, and this was the
largest share of its CPU. `Direct` keeps SQLAlchemy where it pays, compiling a Core statement and
converting values with the same bind and result processors SQLAlchemy would use, and hands the SQL
to the driver connection the session already checked out. The engine's `before_cursor_execute`
listeners still see each statement (the metrics count it), and a driver error goes through
SQLAlchemy's own handling: the same exception classes, and a dead connection is invalidated.

The driver runs it only where SQLAlchemy's transaction bookkeeping has nothing to do: PostgreSQL in
`AUTOCOMMIT` (`Database.single`, `Database.statement`), and SQLite on the inline driver, whose
`BEGIN` SQLAlchemy emitted already when the session took its connection. Anywhere else (a
PostgreSQL transaction, aiosqlite, a connection being revalidated, an engine whose listeners want
SQLAlchemy's execution context, as tracing's do) it is `connection.execute`.
"""

from __future__ import annotations

from collections import Counter, namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import await_, greenlet_spawn

from orrery.db import sqlite_inline

T = TypeVar("T")


@dataclass(frozen=True)
class _Compiled:
    """One statement compiled for one dialect: its SQL, parameter order and value converters."""

    sql: str
    names: tuple[str, ...]
    defaults: Mapping[str, Any]
    binds: Mapping[str, Callable[[Any], Any]]
    types: tuple[Any, ...]
    row: Any
    required: frozenset[str]

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        """The positional parameters for `params` (the statement's own literals filled in)."""
        out = []
        for name in self.names:
            if name in params:
                value = params[name]
            elif name in self.required:  # SQLAlchemy would fill a column default: say so instead
                raise TypeError(f"Direct: no value for the parameter {name!r}")
            else:
                value = self.defaults[name]
            process = self.binds.get(name)
            out.append(value if process is None else process(value))  # None too: JSON stores `null`
        return out

    def rows(self, raw: Sequence[Sequence[Any]], results: tuple[Any, ...]) -> list[Any]:
        """Driver rows as named tuples, converted by `results` (a processor or None per column)."""
        make = self.row._make
        if not any(results):
            return [make(r) for r in raw]
        return [make([v if p is None else p(v) for p, v in zip(results, r, strict=True)]) for r in raw]


def _compile(statement: ClauseElement, dialect: Dialect) -> _Compiled:
    compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
    if compiled.positiontup is None:
        raise TypeError(f"{dialect.name}: Direct needs a positional parameter style")
    required = {b.key for b in compiled.binds.values() if b.required}
    if any(compiled.binds[k].expanding for k in required):
        raise TypeError("Direct cannot run an IN list bound per call (only a constant one)")
    # a constant IN list is rendered once, one parameter per value (placeholders for the rest)
    state = compiled.construct_expanded_state(dict.fromkeys(required))
    columns = compiled._result_columns or []
    return _Compiled(
        sql=state.statement,
        names=tuple(state.positiontup or ()),
        defaults=state.parameters,
        binds={k: p for k, p in {**compiled._bind_processors, **state.processors}.items() if callable(p)},
        types=tuple(c.type for c in columns),
        row=namedtuple("Row", _field_names([c.name for c in columns]), rename=True),  # noqa: PYI024
        required=frozenset(required),
    )


def _field_names(names: list[str]) -> list[str]:
    """Column names as SQLAlchemy's rows name them: a repeated name gets `__1`, `__2`, ..."""
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        out.append(f"{name}__{seen[name]}" if seen[name] else name)
        seen[name] += 1
    return out


class Direct:
    """A Core statement that runs on the driver where it can (see the module's docstring)."""

    def __init__(self, statement: ClauseElement) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}
        self._results: dict[str, tuple[Any, ...]] = {}
        """Per dialect, the result processors: SQLAlchemy picks some by the column's type on the
        server (asyncpg's numbers), so they are learned from the driver once."""

    def compiled(self, dialect: Dialect) -> _Compiled:
        """The statement compiled for `dialect` (once)."""
        found = self._compiled.get(dialect.name)
        if found is None:
            found = self._compiled[dialect.name] = _compile(self.statement, dialect)
        return found

    async def rows(self, on: AsyncSession | AsyncConnection, params: Mapping[str, Any]) -> list[Any]:
        """Run it with `params` on the session's (or the connection's) connection; its rows, whose
        values read by position or by column name."""
        conn = await on.connection() if isinstance(on, AsyncSession) else on
        sync = conn.sync_connection
        driver = _driver(sync) if sync is not None else None
        if sync is None or driver is None:
            result = await conn.execute(cast(Executable, self.statement), dict(params))
            return list(result.all()) if result.returns_rows else []
        dialect = conn.dialect
        compiled = self.compiled(dialect)
        args = compiled.args(params)
        _announce(sync, compiled.sql, args)
        try:
            results = await self._processors(driver, compiled, dialect)
            raw = await driver.fetch(compiled.sql, args)
        except Exception as error:
            await greenlet_spawn(_reraise, sync, error, compiled.sql, args)
            raise  # unreachable: `_reraise` raises
        return compiled.rows(raw, results)

    async def _processors(self, driver: _Asyncpg | _Sqlite, compiled: _Compiled, dialect: Dialect) -> Any:
        """The result processors for `dialect`, learned from the driver's column types once."""
        found = self._results.get(dialect.name)
        if found is None:
            oids = await driver.column_types(compiled.sql, len(compiled.types))
            pairs = zip(compiled.types, oids, strict=True)
            found = tuple(type_._cached_result_processor(dialect, oid) for type_, oid in pairs)
            self._results[dialect.name] = found
        return found


class _Asyncpg:
    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def fetch(self, sql: str, args: list[Any]) -> Any:
        return await self.connection.fetch(sql, *args)

    async def column_types(self, sql: str, n: int) -> list[Any]:
        """The result columns' type oids, as SQLAlchemy's asyncpg cursor describes them."""
        prepared = await self.connection.prepare(sql)
        return [a.type.oid for a in prepared.get_attributes()]


class _Sqlite:
    def __init__(self, connection: sqlite_inline.Connection) -> None:
        self.fetch = connection.fetch_all

    async def column_types(self, sql: str, n: int) -> list[Any]:
        """None for each column: sqlite3 describes no types (SQLAlchemy sees None too)."""
        return [None] * n


def _driver(sync: Connection) -> _Asyncpg | _Sqlite | None:
    """How to run SQL on this connection's driver, or None where SQLAlchemy must (see the module)."""
    if sync.invalidated or sync.closed:
        return None
    if sync.dispatch.after_cursor_execute:
        return None  # a listener that wants SQLAlchemy's execution context (tracing's spans)
    driver = sync.connection.driver_connection
    if isinstance(driver, sqlite_inline.Connection):
        return _Sqlite(driver)
    autocommit = sync.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
    if sync.dialect.driver == "asyncpg" and autocommit:
        return _Asyncpg(driver)
    return None


def begin_on_driver(sync: Connection, sql: str) -> bool:
    """Run SQLite's `BEGIN` (from SQLAlchemy's `begin` event, its own side of the greenlet) on the
    inline driver as `Direct` runs a statement (counted, its error SQLAlchemy's); False where it
    must go through SQLAlchemy. Through `exec_driver_sql` it cost ~0.15 ms, twice a turn."""
    driver = _driver(sync)
    if not isinstance(driver, _Sqlite):
        return False
    _announce(sync, sql, [])
    try:
        await_(driver.fetch(sql, []))
    except Exception as error:
        sync._handle_dbapi_exception(error, sql, (), None, None)
    return True


def _announce(sync: Connection, sql: str, args: list[Any]) -> None:
    """What SQLAlchemy tells the engine's listeners before a statement (the metrics count it)."""
    if sync._has_events or sync.engine._has_events:
        sync.dispatch.before_cursor_execute(sync, None, sql, args, None, False)


def _reraise(sync: Connection, error: Exception, sql: str, args: list[Any]) -> None:
    """Raise `error` as SQLAlchemy would have: translated to the dialect's DBAPI error, then wrapped
    (`IntegrityError`, `OperationalError`, ...), invalidating the connection when it is gone."""
    adapted = sync.connection.dbapi_connection
    try:
        handle = getattr(adapted, "_handle_exception", None)
        if handle is None:
            raise error
        handle(error)  # asyncpg: its error as the adapter's DBAPI error (it raises)
    except Exception as dbapi_error:
        sync._handle_dbapi_exception(dbapi_error, sql, args, None, None)


@dataclass(frozen=True)
class Loader(Generic[T]):
    """A mapped class read by a `Direct` statement: its columns to select, and its objects built
    from them as a query loads them (all columns set, detached, with their identity), ~4x cheaper
    than the ORM's loading for the few rows of a turn."""

    model: type[T]
    keys: tuple[str, ...]
    columns: tuple[Any, ...]
    primary: int

    @classmethod
    def of(cls, model: type[T]) -> Loader[T]:
        """The loader of `model` (one primary-key column)."""
        mapper = model.__mapper__  # type: ignore[attr-defined]
        props = list(mapper.column_attrs)
        (key,) = mapper.primary_key
        primary = next(i for i, p in enumerate(props) if p.columns[0] is key)
        return cls(model, tuple(p.key for p in props), tuple(p.columns[0] for p in props), primary)

    def build(self, values: Sequence[Any]) -> T | None:
        """The object of these column values (in `columns` order); None for an outer join's miss."""
        if values[self.primary] is None:
            return None
        instance: T = self.model.__mapper__.class_manager.new_instance()  # type: ignore[attr-defined]
        instance.__dict__.update(zip(self.keys, values, strict=True))
        make_transient_to_detached(instance)
        return instance

    def load(self, session: AsyncSession, values: Sequence[Any]) -> T | None:
        """The object of these values in `session`, its changes tracked there as a loaded object's
        are (the one the session holds for its row already, if any); None for an outer join's miss."""
        instance = self.build(values)
        if instance is None:
            return None
        held = session.sync_session.identity_map.get(instance._sa_instance_state.key)  # type: ignore[attr-defined]
        if held is not None:
            return cast(T, held)
        session.add(instance)
        return instance


def parts(row: Sequence[Any], *loaders: Loader[Any]) -> list[Sequence[Any]]:
    """A row of `select(*a.columns, *b.columns, ...)` cut into each loader's values, in order."""
    out, start = [], 0
    for loader in loaders:
        out.append(row[start : start + len(loader.keys)])
        start += len(loader.keys)
    return out
