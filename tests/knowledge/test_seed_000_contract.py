"""Seed 000's contract for `load_context_for_task`: its inputs' defaults and the result's shape (the
entry summary and `entries`, `confidence`, `search_terms`, `total_found`), at the core and the tool."""

from __future__ import annotations

import inspect
from typing import Any

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.knowledge import load_context
from orrery.tools import knowledge as knowledge_tools

ENTRY_KEYS = {
    "entry_id",
    "name",
    "collection_slug",
    "collection_name",
    "description_preview",
    "code_paths",
    "hop",
    "relation_type",
}


def test_defaults_are_ten_results_and_two_hops() -> None:
    for fn in (load_context.load_context_for_task, knowledge_tools.load_context_for_task):
        params = inspect.signature(fn).parameters
        assert params["max_results"].default == 10 and params["max_hops"].default == 2, fn


async def test_result_has_the_seed_shape(db: Database, settings: Settings, demo: Any) -> None:
    async with db.sessions() as s:
        result = await load_context.load_context_for_task(
            s, demo.user_id, demo.project_id, "How does overage billing work?"
        )
    data = result.as_dict()
    assert {"entries", "confidence", "search_terms", "total_found"} <= set(data)
    assert data["confidence"] in ("high", "medium", "low", "none") and data["total_found"] >= len(
        data["entries"]
    )
    assert data["entries"] and all(set(e) >= ENTRY_KEYS for e in data["entries"])
    first = data["entries"][0]
    assert (
        first["code"] == "BR-012"
        and first["hop"] == 0
        and first["code_paths"] == ["backend/billing/overage.py"]
    )
    assert all(
        len(e["description_preview"]) <= 151 for e in data["entries"]
    )  # 150 characters and an ellipsis
