"""Full-text search over knowledge-base entries with the database's own engine.

SQLite uses the FTS5 table `kb_entries_fts` to find candidates and ranks them with BM25 over the
caller's project alone (`rescore`: FTS5's own statistics span every tenant); PostgreSQL uses the
generated `search_vector` with `ts_rank`. Both are maintained by the database on every insert,
update and delete (migration 0003). Queries are tokenized here first, so punctuation and case never
break the engine's syntax; a query of only stop words or symbols finds nothing.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Float,
    Integer,
    String,
    Uuid,
    bindparam,
    exists,
    func,
    literal_column,
    select,
    text,
    type_coerce,
)
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.direct import Direct
from orrery.db.models import KbCollection, KbEntry, ProjectMember
from orrery.knowledge.rescore import Fields, project_bm25
from orrery.repo.scope import as_uuid, require_project
from orrery.text import search_terms, stem, stems_of

DF_SAMPLE_ROWS = 1000
CODE_IN_TEXT = re.compile(r"\b([A-Za-z]{1,6})-([0-9]{1,6})\b")


@dataclass(frozen=True)
class SearchHit:
    """One matching entry, best first."""

    entry_id: uuid.UUID
    code: str
    name: str
    description: str | None
    data: dict[str, Any]
    collection_slug: str
    collection_name: str
    priority: int
    rank: float
    """Higher is better; exact code matches rank above everything."""
    matched_terms: int
    """How many distinct query terms the entry contains (after light stemming)."""
    exact_code: bool


@dataclass(frozen=True)
class SearchResult:
    """Hits plus the terms that were searched."""

    hits: list[SearchHit]
    terms: list[str]
    queries: int = 1
    """SQL statements the search ran (for round-trip accounting)."""
    project_id: uuid.UUID | None = None


def query_codes(query: str) -> list[str]:
    """Entry codes mentioned in a query (`br-012` -> `BR-012`)."""
    return list(dict.fromkeys(f"{a.upper()}-{b}" for a, b in CODE_IN_TEXT.findall(query)))


async def search_entries(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, query: str, *, limit: int = 20
) -> SearchResult:
    """Entries of one of the user's projects that match `query`, best first. Membership is part of
    each search's own query; only a search that finds nothing asks whether the project is theirs
    (else not found)."""
    pid = as_uuid(project_id, "project")
    member = _member(pid, user_id)
    codes = query_codes(query)
    code_parts = {p.lower() for c in codes for p in c.split("-")}
    terms = [t for t in search_terms(query) if t not in code_parts]
    if not terms and not codes:
        await require_project(session, user_id, pid)
        return SearchResult([], [], 1, pid)
    ranked = await _full_text(session, pid, member, terms, limit) if terms else []
    exact = await _by_code(session, pid, member, codes) if codes else []
    if not ranked and not exact:
        await require_project(session, user_id, pid)
    seen = {row[0].id for row in exact}
    rows = [(e, c, math.inf) for e, c in exact] + [r for r in ranked if r[0].id not in seen]
    wanted = {stem(t): t for t in terms}
    hits = []
    for entry, collection, rank in rows[:limit]:
        words = stems_of(f"{entry.code} {entry.name} {entry.description or ''} {entry.data}")
        hits.append(
            SearchHit(
                entry_id=entry.id,
                code=entry.code,
                name=entry.name,
                description=entry.description,
                data=dict(entry.data or {}),
                collection_slug=collection.slug,
                collection_name=collection.name,
                priority=collection.priority,
                rank=rank,
                matched_terms=len(wanted.keys() & words),
                exact_code=entry.code in codes,
            )
        )
    return SearchResult(hits, terms + codes, 1 + bool(terms) + bool(codes), pid)


MEMBER = exists().where(
    ProjectMember.project_id == bindparam("member_project", type_=Uuid()),
    ProjectMember.user_id == bindparam("member_user", type_=Uuid()),
)
"""The condition that the user belongs to the project, folded into a search's own query (its
parameters come from `_member`)."""


def _member(pid: uuid.UUID, user_id: uuid.UUID) -> dict[str, Any]:
    return {"member_project": pid, "member_user": user_id}


async def term_document_counts(
    session: AsyncSession, project_id: uuid.UUID, terms: list[str]
) -> tuple[int, dict[str, int]]:
    """How many of the project's entries there are, and how many contain each term as a whole
    (stemmed) word, not as a prefix: the document frequencies behind idf weights and distinctiveness.
    One statement; on PostgreSQL counted over at most `DF_SAMPLE_ROWS` of the project's entries."""
    bind = session.get_bind()
    if bind.dialect.name == "sqlite":
        # the FTS index drives each count (CROSS JOIN fixes the loop order); the project filter is
        # checked per match by rowid
        parts = ["(SELECT count(*) FROM kb_entries WHERE project_id = :p)"] + [
            f"(SELECT count(*) FROM kb_entries_fts CROSS JOIN kb_entries AS e "
            f"ON e.rowid = kb_entries_fts.rowid WHERE kb_entries_fts MATCH :m{i} AND e.project_id = :p)"
            for i in range(len(terms))
        ]
        statement = text("SELECT " + ", ".join(parts)).bindparams(
            bindparam("p", project_id, type_=KbEntry.__table__.c.project_id.type),
            *(bindparam(f"m{i}", f'"{t}"') for i, t in enumerate(terms)),
        )
        row = (await session.execute(statement)).one()
    else:
        params = {"p": project_id, **{f"t{i}": t for i, t in enumerate(terms)}}
        row = (await _pg_counts_query(len(terms)).rows(session, params))[0]
    return int(row[0]), {t: int(n) for t, n in zip(terms, row[1:], strict=True)}


@lru_cache(maxsize=32)
def _pg_counts_query(n: int) -> Direct:
    """`term_document_counts`' PostgreSQL statement for `n` terms (`t0`, `t1`, ...), built once per
    number of terms, bound per call (built per call it cost ~0.3 ms of a turn). Checking every
    row's tsvector costs ~1 ms per 1,000 entries and term: the frequencies are estimated on a
    bounded sample of the project's entries (exact for smaller KBs)."""
    sample = (
        select(literal_column("kb_entries.search_vector").label("v"))
        .select_from(KbEntry)
        .where(KbEntry.project_id == bindparam("p", type_=Uuid()))
        .limit(DF_SAMPLE_ROWS)
        .subquery("sample")
    )
    english: Any = literal_column("'english'::regconfig")
    counts = [
        func.count().filter(sample.c.v.op("@@")(func.to_tsquery(english, bindparam(f"t{i}", type_=String()))))
        for i in range(n)
    ]
    return Direct(select(func.count(), *counts).select_from(sample))


async def _by_code(
    session: AsyncSession, project_id: uuid.UUID, member: dict[str, Any], codes: list[str]
) -> list[Any]:
    rows = await session.execute(
        select(KbEntry, KbCollection)
        .join(KbCollection, KbCollection.id == KbEntry.collection_id)
        .where(KbEntry.project_id == project_id, KbEntry.code.in_(codes), MEMBER),
        member,
    )
    return list(rows.all())


async def _full_text(
    session: AsyncSession, project_id: uuid.UUID, member: dict[str, Any], terms: list[str], limit: int
) -> list[Any]:
    if session.get_bind().dialect.name == "sqlite":
        return await _sqlite_project_ranked(session, member, project_id, terms, limit)
    params = {"tsquery": " | ".join(f"{t}:*" for t in terms), "p": project_id, "n": limit, **member}
    rows = await _PG_RANKED.rows(session, params)
    return [(_Entry.of(r), _Collection(r.slug, r.collection_name, r.priority), float(r.score)) for r in rows]


def _pg_ranked_query() -> Any:
    """The statement of PostgreSQL's search, built once per process (bound per call): building it
    per search cost ~0.4 ms. Plain values, as SQLite's candidates (no ORM objects)."""
    tsquery = func.to_tsquery(literal_column("'english'::regconfig"), bindparam("tsquery", type_=String))
    vector: Any = literal_column("kb_entries.search_vector")
    score = func.ts_rank(vector, tsquery, type_=Float)
    return (
        select(*_VALUES, score.label("score"))
        .join(KbCollection, KbCollection.id == KbEntry.collection_id)
        .where(KbEntry.project_id == bindparam("p", type_=Uuid()), vector.op("@@")(tsquery), MEMBER)
        .order_by(score.desc(), KbEntry.code)
        .limit(bindparam("n", type_=Integer))
    )


_VALUES = (
    type_coerce(KbEntry.id, String).label("id"),
    KbEntry.code,
    KbEntry.name,
    KbEntry.description,
    type_coerce(KbEntry.data, String).label("data"),
    KbCollection.slug,
    KbCollection.name.label("collection_name"),
    KbCollection.priority,
)
"""What a ranked search reads of an entry and its collection, past the ORM's type processing (the
id and the data arrive as text on SQLite, as the driver's UUID and decoded JSON on PostgreSQL)."""
MAX_CANDIDATES = 1000
"""Most FTS5 matches of one project that are re-scored (a query matching more keeps the first)."""


def _sqlite_ranked_query() -> Any:
    """The candidates' statement of `_sqlite_project_ranked`, built once per process (bound per call)."""
    project = bindparam("p", type_=KbEntry.__table__.c.project_id.type)
    # FTS5 drives (CROSS JOIN fixes the loop order) and the project's candidates are cut inside, so
    # SQLite materializes them instead of running the MATCH once per entry of the project
    fts = (
        text(
            "SELECT kb_entries_fts.rowid AS rid FROM kb_entries_fts CROSS JOIN kb_entries AS e "
            "ON e.rowid = kb_entries_fts.rowid WHERE kb_entries_fts MATCH :match AND e.project_id = :p "
            "ORDER BY e.code LIMIT :n"
        )
        .bindparams(bindparam("match"), project, bindparam("n", MAX_CANDIDATES))
        .columns(rid=Integer)
        .subquery()
    )
    corpus = select(func.count()).where(KbEntry.project_id == project).scalar_subquery()
    return (  # plain values for the candidates (no ORM objects, raw JSON text as FTS5 indexed it)
        select(*_VALUES, corpus.label("corpus"))
        .join(KbCollection, KbCollection.id == KbEntry.collection_id)
        .join(fts, literal_column("kb_entries.rowid") == fts.c.rid)
        .where(KbEntry.project_id == project, MEMBER)
        .order_by(KbEntry.code)
        .limit(MAX_CANDIDATES)
    )


_SQLITE_RANKED = Direct(_sqlite_ranked_query())
_PG_RANKED = Direct(_pg_ranked_query())


async def _sqlite_project_ranked(
    session: AsyncSession, member: dict[str, Any], project_id: uuid.UUID, terms: list[str], limit: int
) -> list[Any]:
    """FTS5 finds the project's matches; BM25 with the project's own statistics orders them."""
    params = {"match": " OR ".join(f'"{t}"*' for t in terms), "p": project_id, **member}
    rows = await _SQLITE_RANKED.rows(session, params)
    if not rows:
        return []
    docs = [Fields(r.code, r.name, r.description, r.data) for r in rows]
    scores = project_bm25(terms, docs, int(rows[0].corpus))
    ranked = sorted(zip(rows, scores, strict=True), key=lambda pair: (-pair[1], pair[0].code))
    return [
        (_Entry.of(r), _Collection(r.slug, r.collection_name, r.priority), score)
        for r, score in ranked[:limit]
    ]


@dataclass(frozen=True)
class _Entry:
    """The entry fields a search hit reads (the same names as the ORM model's)."""

    id: uuid.UUID
    code: str
    name: str
    description: str | None
    data: dict[str, Any]

    @classmethod
    def of(cls, row: Any) -> _Entry:
        # text on SQLite; on PostgreSQL the driver's UUID and the decoded JSON
        data = json.loads(row.data) if isinstance(row.data, str) and row.data else row.data or {}
        entry_id = uuid.UUID(str(row.id))
        return cls(entry_id, row.code, row.name, row.description, data if isinstance(data, dict) else {})


@dataclass(frozen=True)
class _Collection:
    slug: str
    name: str
    priority: int
