"""Synthetic workspaces for benchmarks: large, realistic in shape, and reproducible from a seed.

Every id, name, state, timestamp and edge comes from one `random.Random(seed)`, so the same
arguments produce the same rows (the `digest` proves it). Rows go in with bulk inserts in chunks.
"""

from __future__ import annotations

import bisect
import hashlib
import random
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.engine import Database
from orrery.db.models import (
    Edge,
    Entity,
    KbCollection,
    KbEntry,
    KbRelation,
    Project,
    ProjectMember,
    User,
    UserProfile,
)
from orrery.errors import ValidationError
from orrery.repo import identity
from orrery.vocabulary import KB_COLLECTION_PRIORITY

CHUNK = 5_000
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
KIND_WEIGHTS = {"task": 60, "plan": 8, "goal": 5, "milestone": 7, "document": 12, "output": 8}
STATES = {
    "task": ["todo", "todo", "in_progress", "in_progress", "done", "done", "done", "blocked", "cancelled"],
    "plan": ["active", "active", "draft", "completed"],
    "goal": ["active", "active", "draft", "achieved"],
    "milestone": ["active", "active", "done"],
    "document": ["active", "draft", "archived"],
    "output": ["draft", "in_progress", "published"],
}
# Which edges each kind starts: (relation, target kind, weight)
EDGE_RULES: dict[str, list[tuple[str, str, int]]] = {
    "task": [
        ("belongs_to_plan", "plan", 4),
        ("depends_on", "task", 4),
        ("supports_goal", "goal", 2),
        ("references", "document", 3),
        ("produces", "output", 1),
        ("targets_milestone", "milestone", 1),
        ("relates_to", "task", 1),
    ],
    "plan": [("supports_goal", "goal", 3), ("has_task", "task", 3), ("references", "document", 1)],
    "goal": [("requires", "task", 2), ("achieved_by", "milestone", 1), ("relates_to", "goal", 1)],
    "milestone": [("contains", "task", 1), ("relates_to", "milestone", 1)],
    "document": [("references", "document", 2), ("referenced_by", "task", 1), ("contains", "document", 1)],
    "output": [("produced_by", "task", 3), ("references", "document", 1)],
}
VERBS = [
    "Draft",
    "Review",
    "Ship",
    "Plan",
    "Test",
    "Migrate",
    "Design",
    "Measure",
    "Refactor",
    "Document",
    "Launch",
    "Audit",
    "Automate",
    "Prototype",
    "Interview",
    "Price",
    "Onboard",
    "Estimate",
]
NOUNS = [
    "billing",
    "onboarding",
    "pricing page",
    "search",
    "workspace roles",
    "release notes",
    "dashboard",
    "checkout",
    "API limits",
    "beta feedback",
    "status page",
    "help center",
    "invoices",
    "SSO",
    "data export",
    "mobile app",
    "usage calculator",
    "audit log",
    "notifications",
    "integrations",
]
TERMS = [
    "supplier",
    "invoice",
    "workspace",
    "overage",
    "seat",
    "tier",
    "allowance",
    "refund",
    "trial",
    "renewal",
    "quota",
    "discount",
    "approval",
    "purchase order",
    "region",
    "tax",
    "credit",
    "ledger",
]
KB_SHAPES = ["rule", "definition", "policy", "limit", "event"]
KB_PREFIX = {
    "business-rules": "BR",
    "glossary": "GT",
    "decisions": "DR",
    "features": "FT",
    "standards": "ST",
    "principles": "PR",
    "tensions": "TN",
    "strategy": "SG",
    "tracking-events": "TE",
}


@dataclass
class SynthResult:
    """Handles and counts of a generated workspace; equal arguments give an equal `digest`."""

    user_id: uuid.UUID
    project_id: uuid.UUID
    entities: int
    edges: int
    kb_entries: int
    kb_relations: int
    digest: str | None
    focus_task_id: uuid.UUID | None
    created: bool
    api_key: str | None = None
    seconds: float = field(default=0.0)


class _Gen:
    """The seeded source of every value."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.hash = hashlib.sha256()

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def when(self, max_days: int = 365) -> datetime:
        return EPOCH + timedelta(seconds=self.rng.randrange(max_days * 86_400))

    def sentence(self, words: Sequence[str], n: int) -> str:
        return " ".join(self.rng.choice(words) for _ in range(n))

    def record(self, *parts: object) -> None:
        self.hash.update("|".join(map(str, parts)).encode())
        self.hash.update(b"\n")


def _identity(seed: int, entities: int, edges_per_entity: int, kb_entries: int) -> tuple[str, str]:
    tag = f"s{seed}-n{entities}-k{edges_per_entity}-m{kb_entries}"
    return f"synth-{tag}@synth.orrery.dev", f"Synthetic workspace {tag}"


async def synthesize(
    db: Database,
    *,
    entities: int,
    edges_per_entity: int,
    kb_entries: int,
    seed: int,
    server_secret: str | None = None,
) -> SynthResult:
    """Generate a workspace (once per argument set) and return its handles."""
    if entities < 1 or edges_per_entity < 0 or kb_entries < 0:
        raise ValidationError("entities must be >= 1; edges-per-entity and kb-entries must be >= 0")
    email, project_name = _identity(seed, entities, edges_per_entity, kb_entries)
    async with db.transaction() as session:
        existing = await identity.find_user_by_email(session, email)
        if existing is not None:
            result = await _existing(session, existing.id, project_name)
        else:
            result = await _generate(
                session, email, project_name, entities, edges_per_entity, kb_entries, seed
            )
        if server_secret is not None:
            await identity.revoke_api_keys(session, result.user_id, "synth")
            _, result.api_key = await identity.issue_api_key(session, result.user_id, "synth", server_secret)
        if result.created and db.dialect == "postgresql":
            # fresh planner statistics, or PostgreSQL plans the first queries for empty tables
            await session.execute(text("ANALYZE entities, edges, kb_entries, kb_relations"))
    return result


async def _existing(session: AsyncSession, user_id: uuid.UUID, project_name: str) -> SynthResult:
    from orrery.repo.summary import project_summary

    project_id = (
        await session.execute(
            select(Project.id).where(Project.owner_id == user_id, Project.name == project_name)
        )
    ).scalar_one()
    summary = await project_summary(session, user_id, project_id)
    return SynthResult(
        user_id=user_id,
        project_id=project_id,
        entities=sum(summary.entities.values()),
        edges=summary.edges,
        kb_entries=sum(summary.kb_collections.values()),
        kb_relations=summary.kb_relations,
        digest=None,
        focus_task_id=await _most_linked_task(session, project_id),
        created=False,
    )


async def _most_linked_task(session: AsyncSession, project_id: uuid.UUID) -> uuid.UUID | None:
    """The task with the most edges (ties: highest id), the natural focus for benchmarks."""
    ends = union_all(
        select(Edge.src_id.label("eid")).where(Edge.project_id == project_id, Edge.src_kind == "task"),
        select(Edge.dst_id.label("eid")).where(Edge.project_id == project_id, Edge.dst_kind == "task"),
    ).subquery()
    row = (
        await session.execute(
            select(ends.c.eid).group_by(ends.c.eid).order_by(func.count().desc(), ends.c.eid.desc()).limit(1)
        )
    ).first()
    return row[0] if row else None


async def _generate(
    session: AsyncSession, email: str, project_name: str, n: int, k: int, m: int, seed: int
) -> SynthResult:
    gen = _Gen(seed)
    user_id, project_id = gen.uuid(), gen.uuid()
    await session.execute(
        insert(User),
        [
            {
                "id": user_id,
                "email": email,
                "display_name": f"Synth {seed}",
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        ],
    )
    await session.execute(
        insert(UserProfile),
        [
            {
                "user_id": user_id,
                "timezone": "UTC",
                "preferences": {},
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        ],
    )
    await session.execute(
        insert(Project),
        [
            {
                "id": project_id,
                "owner_id": user_id,
                "name": project_name,
                "description": f"Generated by `orrery demo synth` (seed {seed}).",
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        ],
    )
    await session.execute(
        insert(ProjectMember),
        [{"project_id": project_id, "user_id": user_id, "role": "owner", "created_at": EPOCH}],
    )
    rows = _entity_rows(gen, project_id, n)
    for chunk in _chunks(rows):
        await session.execute(insert(Entity), chunk)
    edges = _edge_rows(gen, project_id, rows, k)
    for chunk in _chunks(edges):
        await session.execute(insert(Edge), chunk)
    kb, relations = await _knowledge(session, gen, project_id, m)
    focus = await _most_linked_task(session, project_id)
    return SynthResult(
        user_id, project_id, len(rows), len(edges), kb, relations, gen.hash.hexdigest()[:16], focus, True
    )


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), CHUNK):
        yield rows[start : start + CHUNK]


def _entity_rows(gen: _Gen, project_id: uuid.UUID, n: int) -> list[dict[str, Any]]:
    kinds = gen.rng.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()), k=n)
    for required, at in (("task", 0), ("plan", 1), ("goal", 2)):
        if n > at:
            kinds[at] = required
    rows = []
    for i, kind in enumerate(kinds):
        created = gen.when()
        row: dict[str, Any] = {
            "id": gen.uuid(),
            "project_id": project_id,
            "kind": kind,
            "name": f"{gen.rng.choice(VERBS)} {gen.rng.choice(NOUNS)} #{i}",
            "state": gen.rng.choice(STATES[kind]),
            "type_key": f"{kind}.synthetic",
            "description": f"{gen.sentence(VERBS, 2).lower()} the {gen.sentence(NOUNS, 3)}.",
            "props": {"estimate_hours": gen.rng.randint(1, 40)} if kind == "task" else {},
            "due_at": created + timedelta(days=gen.rng.randint(7, 120))
            if kind in ("milestone", "task")
            else None,
            "goal_type": gen.rng.choice(["habit", "target", "project"]) if kind == "goal" else None,
            "is_scratch": kind == "document" and gen.rng.random() < 0.05,
            "is_context_document": False,
            "created_at": created,
            "updated_at": created,
        }
        gen.record(row["id"], kind, row["name"], row["state"])
        rows.append(row)
    docs = [r for r in rows if r["kind"] == "document" and not r["is_scratch"]]
    if docs:
        docs[0]["is_context_document"] = True
    return rows


def _edge_rows(gen: _Gen, project_id: uuid.UUID, rows: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    by_kind: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_kind.setdefault(row["kind"], []).append(i)
    seen: set[tuple[uuid.UUID, str, uuid.UUID]] = set()
    edges = []
    for i, src in enumerate(rows):
        rules = [r for r in EDGE_RULES[src["kind"]] if by_kind.get(r[1])]
        if not rules:
            continue
        for _ in range(k):
            rel, target_kind, _w = gen.rng.choices(rules, weights=[r[2] for r in rules])[0]
            pool = by_kind[target_kind]
            # locality: prefer targets created near this one, like work clustered in time
            centre = bisect.bisect_left(pool, i)
            j = pool[max(0, min(len(pool) - 1, centre + int(gen.rng.gauss(0, 25))))]
            key = (src["id"], rel, rows[j]["id"])
            if j == i or key in seen:
                continue
            seen.add(key)
            edge = {
                "id": gen.uuid(),
                "project_id": project_id,
                "src_id": src["id"],
                "src_kind": src["kind"],
                "rel": rel,
                "dst_id": rows[j]["id"],
                "dst_kind": target_kind,
                "props": {},
                "created_at": max(src["created_at"], rows[j]["created_at"]),
            }
            gen.record(*key)
            edges.append(edge)
    return edges


async def _knowledge(session: AsyncSession, gen: _Gen, project_id: uuid.UUID, m: int) -> tuple[int, int]:
    if m == 0:
        return 0, 0
    collections: list[dict[str, Any]] = []
    for slug, priority in KB_COLLECTION_PRIORITY.items():
        collections.append(
            {
                "id": gen.uuid(),
                "project_id": project_id,
                "slug": slug,
                "name": slug.replace("-", " ").title(),
                "priority": priority,
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        )
    await session.execute(insert(KbCollection), collections)
    entries = []
    for i in range(m):
        col = collections[i % len(collections)]
        term = gen.rng.choice(TERMS)
        entries.append(
            {
                "id": gen.uuid(),
                "project_id": project_id,
                "collection_id": col["id"],
                "code": f"{KB_PREFIX[col['slug']]}-{i // len(collections) + 1:03d}",
                "name": f"{term.title()} {gen.rng.choice(KB_SHAPES)} {i}",
                "description": (
                    f"How {term} relates to {gen.sentence(TERMS, 2)} when {gen.sentence(NOUNS, 2)} change."
                ),
                "data": {
                    "code_paths": [f"src/{term.replace(' ', '_')}/{i}.py"] if gen.rng.random() < 0.4 else []
                },
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        )
        gen.record(entries[-1]["code"], entries[-1]["name"])
    for chunk in _chunks(entries):
        await session.execute(insert(KbEntry), chunk)
    relations, seen = [], set()
    for i, entry in enumerate(entries):
        for _ in range(gen.rng.randint(0, 3)):
            j = gen.rng.randrange(m)
            key = (
                entry["id"],
                gen.rng.choice(["uses_term", "refines", "applies_to", "decided_by"]),
                entries[j]["id"],
            )
            if j == i or key in seen:
                continue
            seen.add(key)
            relations.append(
                {
                    "id": gen.uuid(),
                    "project_id": project_id,
                    "src_entry_id": key[0],
                    "rel_type": key[1],
                    "dst_entry_id": key[2],
                }
            )
            gen.record(*key)
    for chunk in _chunks(relations):
        await session.execute(insert(KbRelation), chunk)
    return len(entries), len(relations)
