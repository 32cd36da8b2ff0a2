"""load_context_for_task: search the KB, walk entry relations, rank, and say how confident we are.

1. Search (full text finds candidates by prefix); each hit is judged on checkable evidence
   (`evidence`: its code or name in the task, or whole-word stemmed matches of distinctive words
   covering the task's content) and is *direct* or not. 2. Breadth-first over `kb_relations`
   (both directions) up to `max_hops` from the top 3 hits, direct or not (seed 000); each hop label
   is the distance from a starting hit, so none exceeds `max_hops`. 3. Deduplicate by entry
   (lowest hop wins). 4. Rank as the seed says, by hop, then collection priority
   (business-rules > glossary > decisions > features > standards > principles > tensions >
   strategy > tracking-events), then direct before partial, then search rank; cap at
   `max_results`: what is cut is listed in `excluded` with its reason.

A hit is also direct when it is the candidate closest in meaning to the task, close enough
(`meaning`: the local embedder as a second signal); without the embedder, search stays lexical and
`meaning` is False.

Confidence: `high` with 3+ direct hits, `medium` with 1-2, `low` with none but partial matches or
related entries, `none` when nothing was found.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import KbCollection, KbEntry, KbRelation
from orrery.errors import ValidationError
from orrery.knowledge.evidence import Evidence, Weights, content_terms, correct_terms, judge, words_of
from orrery.knowledge.meaning import closest_in_meaning, meaning_scores
from orrery.knowledge.search import (
    SearchHit,
    SearchResult,
    query_codes,
    search_entries,
    term_document_counts,
)
from orrery.text import preview, search_terms, stem

Confidence = Literal["high", "medium", "low", "none"]
SEEDS = 3
PREVIEW_CHARS = 150
Placed = dict[uuid.UUID, tuple[int, str | None, uuid.UUID | None]]
"""entry id -> (hop, relation to its parent or `partial_match`/None for a search hit, parent id)"""


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
    """How it relates to the entry it was reached from (`partial_match` for a search hit that is
    not direct; None for a direct hit)."""
    parent_code: str | None
    evidence: str | None = None
    """Why a direct hit is direct: `code`, `name`, `coverage`, `long task` or `meaning`."""
    collection_priority: int = 0
    """The collection's rank (1 = business-rules): the packet prints its groups in this order."""


@dataclass(frozen=True)
class ExcludedEntry:
    """An entry found but left out of the packet, and why."""

    code: str
    name: str
    hop: int
    reason: str


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
    distinctive: bool = False
    """Whether some hit holds a distinctive word of the task as a whole word (a low-confidence
    packet is worth offering only then)."""
    excluded: list[ExcludedEntry] = field(default_factory=list)
    """Entries found but cut by `max_results`, with the reason."""
    meaning: bool = True
    """Whether meaning (the local embedder) was a second signal; False: lexical only."""
    closest: float | None = None
    """The best cosine similarity of a candidate to the task (None: lexical only, or no candidate)."""
    named_loosely: bool = False
    """Whether a content word of the task is a whole word of some hit's name ("pricing" of "Pricing
    page shows tax-exclusive prices"): about the KB's subject, if not precise enough to pick."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what `orrery kb load-context --json` prints)."""
        return asdict(self)


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


@dataclass(frozen=True)
class Judged:
    """Step 1 of `load_context_for_task`: the search hits, each judged direct or not."""

    found: SearchResult
    terms: list[str]
    size: int
    weights: Weights
    judged: dict[uuid.UUID, Evidence]
    scores: dict[uuid.UUID, float] | None
    idle: bool = False
    """The task has no code and no content word (a greeting): nothing to be about."""

    @property
    def direct(self) -> list[SearchHit]:
        """The direct hits, best first."""
        return [h for h in self.found.hits if self.judged[h.entry_id].reason]


async def judge_task(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID | str, task: str, *, limit: int = 20
) -> Judged:
    """Search the KB for the task and judge each hit (step 1 alone: what a caller that only needs
    the direct hits reads, `autocontext._replace_guess`)."""
    found = await search_entries(session, user_id, project_id, task, limit=limit)
    codes = query_codes(task)
    if not codes and not content_terms(task):  # greetings, thanks: nothing to be about
        return Judged(found, [], 0, Weights.of(0, {}), {}, None, idle=True)
    terms = correct_terms(content_terms(task), found.hits)
    size, counts = (
        await term_document_counts(session, found.project_id, terms)
        if terms and found.project_id
        else (0, {})
    )
    weights = Weights.of(size, counts)
    judged, scores = await _judged(task, found.hits, terms, codes, weights)
    return Judged(found, terms, size, weights, judged, scores)


async def load_context_for_task(
    session: AsyncSession,
    user_id: uuid.UUID,
    project_id: uuid.UUID | str,
    task_description: str,
    *,
    max_results: int = 10,
    max_hops: int = 2,
    judged: Judged | None = None,
) -> ContextLoad:
    """The KB context for a task description (see the module docstring); `judged`: its step 1,
    when the caller has it (`judge_task` of the same task, with a limit of max(20, max_results))."""
    if not 1 <= max_results <= 100:
        raise ValidationError("max_results must be between 1 and 100")
    if not 0 <= max_hops <= 5:
        raise ValidationError("max_hops must be between 0 and 5")
    step = judged or await judge_task(
        session, user_id, project_id, task_description, limit=max(20, max_results)
    )
    found = step.found
    if step.idle:
        return ContextLoad([], "none", " ".join(found.terms), 0, 0)
    direct = step.direct
    seeds = found.hits[:SEEDS]
    placed: Placed = {h.entry_id: (0, None, None) for h in direct}
    placed.update({h.entry_id: (0, "partial_match", None) for h in seeds if h.entry_id not in placed})
    await _walk(session, [h.entry_id for h in seeds], placed, max_hops)
    entries = await _ranking_rows(session, placed)
    order = {h.entry_id: i for i, h in enumerate(found.hits)}
    rank = {eid: order.get(eid, len(order) + 1) for eid in placed}
    entries.sort(
        key=lambda e: (placed[e.id][0], e.priority, placed[e.id][1] is not None, rank.get(e.id, 0), e.code)
    )
    result = await _entries(session, entries[:max_results], entries, placed, found.hits, step.judged)
    scores = step.scores
    return ContextLoad(
        entries=result,
        confidence=confidence_for(len(direct), len(entries)),
        search_terms=" ".join(found.terms),
        total_found=len(entries),
        direct_hits=len(direct),
        kb_entries=step.size if step.terms else None,
        distinctive=_distinctive(found.hits, step.judged, step.weights),
        excluded=_excluded(entries[max_results:], placed, max_results),
        meaning=scores is not None,
        closest=max(scores.values()) if scores else None,
        named_loosely=_named_loosely(found.hits, step.terms),
    )


def _named_loosely(hits: list[SearchHit], terms: list[str]) -> bool:
    said = {stem(t) for t in terms}
    return any(said & {stem(w) for w in search_terms(h.name)} for h in hits)


async def _judged(
    task: str, hits: list[SearchHit], terms: list[str], codes: list[str], weights: Weights
) -> tuple[dict[uuid.UUID, Evidence], dict[uuid.UUID, float] | None]:
    """Each hit's lexical evidence, then meaning: the candidate closest to the task, when close
    enough, is direct too. Also the meaning scores (None: lexical only)."""
    said = words_of(task)
    judged = {h.entry_id: judge(h, terms, codes, weights, said) for h in hits}
    scores = await meaning_scores(task, hits)
    closest = closest_in_meaning(scores)
    if closest is not None and not judged[closest].reason:
        judged[closest] = replace(judged[closest], reason="meaning")
    return judged, scores


async def _entries(
    session: AsyncSession,
    kept: list[Any],
    ranked: list[Any],
    placed: Placed,
    hits: list[SearchHit],
    judged: dict[uuid.UUID, Evidence],
) -> list[ContextEntry]:
    """The kept entries in full, in rank order."""
    codes = {row.id: row.code for row in ranked}
    details = await _details(session, [row.id for row in kept], {h.entry_id: h for h in hits})
    return [
        replace(
            _context_entry(details[row.id], placed[row.id], codes, judged.get(row.id)),
            collection_priority=row.priority,
        )
        for row in kept
    ]


def _distinctive(hits: list[SearchHit], judged: dict[uuid.UUID, Evidence], weights: Weights) -> bool:
    return any(t in weights.distinctive for h in hits for t in judged[h.entry_id].matched)


def _excluded(rows: list[Any], placed: Placed, limit: int) -> list[ExcludedEntry]:
    """The entries ranked below the cap: code, name, hop and why they are out."""
    reason = f"ranked below max_results ({limit})"
    return [ExcludedEntry(r.code, r.name, placed[r.id][0], reason) for r in rows]


async def _walk(session: AsyncSession, seeds: list[uuid.UUID], placed: Placed, max_hops: int) -> None:
    """Breadth-first over relations from the starting hits, one query per hop; the first (lowest)
    hop wins, and a hop is the distance from a starting hit (1 to `max_hops`)."""
    frontier = list(seeds)
    for hop in range(1, max_hops + 1):
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


async def _ranking_rows(session: AsyncSession, placed: Placed) -> list[Any]:
    """Only what ranking needs (id, code, name, collection priority) for every placed entry: at two hops
    this is hundreds of rows, of which `max_results` are kept."""
    if not placed:
        return []
    rows = await session.execute(
        select(KbEntry.id, KbEntry.code, KbEntry.name, KbCollection.priority)
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
    evidence: Evidence | None,
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
        evidence=evidence.reason if evidence else None,
    )
