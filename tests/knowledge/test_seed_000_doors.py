"""Seed 000 through the doors where the audit found it wrong: `POST /v1/context/load-for-task` (its
`excluded` key, the seed's ranking and the packet's group order) on both dialects."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from orrery.db.engine import Database
from orrery.repo import identity, knowledge

SUPPLIER_KB = {
    "BR-012": ("business-rules", "Supplier field governance", "Only procurement may edit supplier fields."),
    "BR-015": ("business-rules", "Approved supplier list validation", "Unapproved ones are blocked."),
    "GT-019": ("glossary", "Supplier", "A company we buy goods or services from."),
    "DR-005": ("decisions", "Validation approach", "Validate on submit, not on every keystroke."),
}


async def write_kb(
    db: Database,
    user_id: uuid.UUID,
    entries: dict[str, tuple[str, str, str]],
    relations: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
) -> uuid.UUID:
    """A new project of `user_id` holding `entries` (code: (collection, name, description))."""
    async with db.transaction() as s:
        project = await identity.create_project(s, user_id, f"kb {uuid.uuid4().hex[:6]}")
        cols: dict[str, uuid.UUID] = {}
        ids: dict[str, uuid.UUID] = {}
        for code, (slug, name, description) in entries.items():
            if slug not in cols:
                made = await knowledge.create_collection(s, user_id, project.id, slug, slug.title())
                cols[slug] = made.id
            ids[code] = (await knowledge.create_entry(s, user_id, cols[slug], code, name, description)).id
        for src, rel, dst in relations:
            await knowledge.relate_entries(s, user_id, ids[src], rel, ids[dst])
        return project.id


async def _load(api: httpx.AsyncClient, project: uuid.UUID, task: str, **kw: Any) -> dict[str, Any]:
    response = await api.post(
        "/v1/context/load-for-task", json={"project_id": str(project), "task_description": task, **kw}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_http_load_for_task_lists_what_max_results_cut(api: httpx.AsyncClient, demo: Any) -> None:
    full = await _load(api, demo.project_id, "How does overage billing work?")
    assert full["excluded"] == []
    cut = await _load(api, demo.project_id, "How does overage billing work?", max_results=1)
    assert len(cut["entries"]) == 1 and cut["excluded"]
    assert {"code", "name", "hop", "reason"} == set(cut["excluded"][0])
    assert cut["excluded"][0]["reason"] == "ranked below max_results (1)"
    assert cut["total_found"] == 1 + len(cut["excluded"])


async def test_http_ranks_by_hop_then_priority_then_direct_and_prints_groups_in_priority_order(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    project = await write_kb(db, demo.user_id, SUPPLIER_KB, [("BR-015", "decided_by", "DR-005")])
    loaded = await _load(api, project, "Supplier")
    ranked = [(e["code"], e["hop"], e["evidence"]) for e in loaded["entries"]]
    # GT-019 is the only direct hit (its name), yet business rules outrank the glossary at hop 0
    assert ranked[:3] == [("BR-012", 0, None), ("BR-015", 0, None), ("GT-019", 0, "name")]
    assert ranked[3] == ("DR-005", 1, None)
    packet = loaded["packet"]
    assert packet.index("### Business-Rules (2)") < packet.index("### Glossary (1)")
    assert packet.index("### Glossary (1)") < packet.index("### Decisions (1)")
