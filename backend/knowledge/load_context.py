"""load_context_for_task: search the KB, walk entry relations, rank, and say how confident we are.

1. Search; a hit is *direct* when it names an entry's code or covers at least half of the query's
   content, each query word weighed by its rarity in the project's KB (idf; a word no entry holds
   weighs most), or at least three query words covering a quarter of it (long task descriptions):
   one shared word of "What about the seat thing?" is not a direct hit. 2. Breadth-first over
   `kb_relations` (both directions) up to `max_hops` from the top 3 hits, one query per hop.
   3. Deduplicate by entry (lowest hop wins). 4. Rank by hop, then collection priority
   (business-rules > glossary > decisions > features > standards > principles > tensions >
   strategy > tracking-events), then search rank; cap at `max_results`.

Confidence: `high` with 3+ direct hits, `medium` with 1-2, `low` with none but related entries
(partial matches count as related, at hop 1), `none` when nothing was found.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import asdict, dataclass
from typing import Any, Literal

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from backend.db.models import KbCollection, KbEntry, KbRelation
from backend.errors import ValidationError
from backend.knowledge.search import SearchHit, search_entries, term_document_counts
from backend.text import preview

Confidence = Literal["high", "medium", "low", "none"]
SEEDS = 3
DIRECT_COVERAGE = 0.5
LONG_MATCH_TERMS = 3
LONG_MATCH_COVERAGE = 0.25
PREVIEW_CHARS = 150


@dataclass(frozen=True)
class ContextEntry:
    """One entry of the loaded context."""

    entry_id: str
    code: str
    name: str
    collection_slug: str
    collection_name: str
    description_preview: str
    code_paths: list[str]
    hop: int
    relation_type: str | None
    """How it relates to the entry it was reached from (`partial_match` for weak search hits)."""
    parent_code: str | None


@dataclass(frozen=True)
class ContextLoad:
    """The result of load_context_for_task."""

    entries: list[ContextEntry]
    confidence: Confidence
    search_terms: str
    total_found: int
    direct_hits: int
    kb_entries: int | None = None
    """How many entries the project's KB holds (None when the query had no words to weigh)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what `orrery kb load-context --json` prints)."""
        return asdict(self)


def term_weights(entries: int, document_counts: dict[str, int]) -> dict[str, float]:
    """BM25's idf per query term over the project's KB: rare words weigh most, and a word no entry
    contains weighs most of all (the KB does not know what it asks about)."""
    return {t: math.log(1 + (entries - n + 0.5) / (n + 0.5)) for t, n in document_counts.items()}


def coverage(hit: SearchHit, weights: dict[str, float]) -> float:
    """The share of the query's idf weight the hit contains (0 to 1)."""
    total = sum(weights.values())
    return sum(weights.get(t, 0.0) for t in hit.matched) / total if total else 0.0


def is_direct(hit: SearchHit, weights: dict[str, float]) -> bool:
    """A code match; or a hit covering half of the query's weighted content; or, for a long task
    description, at least three of its words covering a quarter of it."""
    if hit.exact_code:
        return True
    share = coverage(hit, weights)
    return share >= DIRECT_COVERAGE or (len(hit.matched) >= LONG_MATCH_TERMS and share >= LONG_MATCH_COVERAGE)


@dataclass(frozen=True)
class _Details:
    """The columns a context entry shows (the same names as the details query's row)."""

    id: uuid.UUID
    code: str
    name: str
    description: str | None
    data: dict[str, Any]
    slug: str
    collection_name: str


def confidence_for(direct: int, total: int) -> Confidence:
    """high: 3+ direct hits; medium: 1-2; low: none direct but something related; none: nothing."""
    if direct >= 3:
        return "high"
    if direct >= 1:
        return "medium"
    return "low" if total else "none"


async def load_context_for_task(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    task_description: str,
    *,
    max_results: int = 10,
    max_hops: int = 2,
) -> ContextLoad:
    """The KB context for a task description (see the module docstring)."""
    if not 1 <= max_results <= 100:
        raise ValidationError("max_results must be between 1 and 100")
    if not 0 <= max_hops <= 5:
        raise ValidationError("max_hops must be between 0 and 5")
    found = await search_entries(session, user_id, project_id, task_description, limit=max(20, max_results))
    words = [t for t in found.terms if "-" not in t]
    size, counts = (
        await term_document_counts(session, found.project_id, words)
        if words and found.project_id
        else (0, {})
    )
    weights = term_weights(size, counts)
    direct = [h for h in found.hits if is_direct(h, weights)]
    weak = [h for h in found.hits if not is_direct(h, weights)]
    order = {h.entry_id: i for i, h in enumerate(found.hits)}
    # entry id -> (hop, relation, parent id)
    placed: dict[uuid.UUID, tuple[int, str | None, uuid.UUID | None]] = {
        h.entry_id: (0, None, None) for h in direct
    }
    if not direct:
        placed.update({h.entry_id: (1, "partial_match", None) for h in weak[:SEEDS]})
    seeds = [h.entry_id for h in (direct or weak)[:SEEDS]]
    await _walk(session, seeds, placed, max_hops, base_hop=0 if direct else 1)
    entries = await _ranking_rows(session, placed)
    rank = {eid: order.get(eid, len(order) + 1) for eid in placed}
    entries.sort(key=lambda e: (placed[e.id][0], e.priority, rank.get(e.id, 0), e.code))
    codes = {row.id: row.code for row in entries}
    top = [row.id for row in entries[:max_results]]
    details = await _details(session, top, {h.entry_id: h for h in found.hits})
    result = [_context_entry(details[eid], placed[eid], codes) for eid in top]
    return ContextLoad(
        entries=result,
        confidence=confidence_for(len(direct), len(entries)),
        search_terms=" ".join(found.terms),
        total_found=len(entries),
        direct_hits=len(direct),
        kb_entries=size if words else None,
    )


async def _walk(
    session: AsyncSession,
    seeds: list[uuid.UUID],
    placed: dict[uuid.UUID, tuple[int, str | None, uuid.UUID | None]],
    max_hops: int,
    base_hop: int,
) -> None:
    """Breadth-first over relations, one query per hop; the first (lowest) hop wins."""
    frontier = list(seeds)
    for hop in range(base_hop + 1, base_hop + max_hops + 1):
        if not frontier:
            return
        rows = await session.execute(
            select(KbRelation.src_entry_id, KbRelation.rel_type, KbRelation.dst_entry_id).where(
                or_(KbRelation.src_entry_id.in_(frontier), KbRelation.dst_entry_id.in_(frontier))
            )
        )
        current = set(frontier)
        frontier = []
        for src, rel, dst in rows.all():
            pairs = [(dst, rel, src)] if src in current else []
            pairs += [(src, f"{rel} (incoming)", dst)] if dst in current else []
            for other, relation, parent in pairs:
                if other not in placed:
                    placed[other] = (hop, relation, parent)
                    frontier.append(other)


async def _ranking_rows(
    session: AsyncSession, placed: dict[uuid.UUID, tuple[int, str | None, uuid.UUID | None]]
) -> list[Any]:
    """Only what ranking needs (id, code, collection priority) for every placed entry: at two hops
    this is hundreds of rows, of which `max_results` are kept."""
    if not placed:
        return []
    rows = await session.execute(
        select(KbEntry.id, KbEntry.code, KbCollection.priority)
        .join(KbCollection, KbCollection.id == KbEntry.collection_id)
        .where(KbEntry.id.in_(list(placed)))
    )
    return list(rows.all())


async def _details(
    session: AsyncSession, ids: list[uuid.UUID], hits: dict[uuid.UUID, SearchHit]
) -> dict[uuid.UUID, Any]:
    """Name, description, data and collection of the kept entries: search hits already carry them,
    the rest (reached by relations) come in one query, skipped when every kept entry was a hit."""
    found: dict[uuid.UUID, Any] = {
        i: _Details(i, h.code, h.name, h.description, h.data, h.collection_slug, h.collection_name)
        for i, h in hits.items()
        if i in ids
    }
    missing = [i for i in ids if i not in found]
    if missing:
        rows = await session.execute(
            select(
                KbEntry.id,
                KbEntry.code,
                KbEntry.name,
                KbEntry.description,
                KbEntry.data,
                KbCollection.slug,
                KbCollection.name.label("collection_name"),
            )
            .join(KbCollection, KbCollection.id == KbEntry.collection_id)
            .where(KbEntry.id.in_(missing))
        )
        found.update({row.id: row for row in rows.all()})
    return found


def _context_entry(
    row: Any,
    placement: tuple[int, str | None, uuid.UUID | None],
    codes: dict[uuid.UUID, str],
) -> ContextEntry:
    hop, relation, parent = placement
    paths = row.data.get("code_paths", []) if isinstance(row.data, dict) else []
    return ContextEntry(
        entry_id=str(row.id),
        code=row.code,
        name=row.name,
        collection_slug=row.slug,
        collection_name=row.collection_name,
        description_preview=preview(row.description, PREVIEW_CHARS),
        code_paths=[str(p) for p in paths],
        hop=hop,
        relation_type=relation,
        parent_code=codes.get(parent) if parent else None,
    )
