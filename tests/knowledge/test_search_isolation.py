"""Search ranking uses the caller's project only: another tenant's knowledge base cannot change the
caller's order or scores (on SQLite, FTS5's own statistics would span every tenant)."""

from __future__ import annotations

from typing import Any

from orrery.db.engine import Database
from orrery.knowledge.search import search_entries
from orrery.repo import knowledge
from tests.support.factories import make_project, make_user

ENTRIES = [
    ("PR-001", "Overage pricing", "Overage is billed monthly at the unit price."),
    ("PR-002", "Invoice schedule", "Invoices go out monthly; overage appears as a line item."),
    ("PR-003", "Seat pricing", "Each seat is priced per month; annual plans get a discount."),
    ("PR-004", "Refunds", "Refunds for unused seats are prorated."),
]


async def _tenant(db: Database, name: str, entries: list[tuple[str, str, str]]) -> tuple[Any, Any]:
    async with db.transaction() as s:
        user = await make_user(s, name)
        project = await make_project(s, user, f"{name}'s project")
        collection = await knowledge.create_collection(s, user.id, project.id, "pricing", "Pricing")
        for code, title, description in entries:
            await knowledge.create_entry(s, user.id, collection.id, code, title, description, {})
    return user.id, project.id


async def _ranking(db: Database, user: Any, project: Any, query: str) -> list[tuple[str, float]]:
    async with db.sessions() as s:
        found = await search_entries(s, user, project, query)
    return [(h.code, round(h.rank, 9)) for h in found.hits]


async def test_another_tenants_entries_do_not_change_the_callers_ranking(db: Database) -> None:
    user, project = await _tenant(db, "Ada", ENTRIES)
    queries = ["overage pricing", "monthly seat", "refunds prorated seats"]
    before = {q: await _ranking(db, user, project, q) for q in queries}
    assert before["overage pricing"][0][0] == "PR-001" and len(before["overage pricing"]) >= 3
    flood = [
        (f"ZZ-{i:03d}", f"overage {'pricing ' * (i % 5)}", "overage seat monthly refunds " * (i % 7 + 1))
        for i in range(60)
    ]
    other_user, other_project = await _tenant(db, "Eve", flood)
    assert {q: await _ranking(db, user, project, q) for q in queries} == before
    theirs = await _ranking(db, other_user, other_project, "overage")
    assert theirs and all(code.startswith("ZZ-") for code, _ in theirs)
