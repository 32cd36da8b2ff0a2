"""Seed 000 through the doors where the audit found it wrong, on both dialects:
`POST /v1/context/load-for-task` (its `excluded` key, the seed's ranking and the packet's group
order, near-name entries, meaning as a second signal) and a first message's decision in
`GET /v1/sessions/{id}/context` (low confidence asks which is meant; an empty KB offers capture)."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from orrery.knowledge import meaning
from orrery.memory.messages import append_message
from orrery.repo import chat, identity, knowledge

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


async def _context(
    api: httpx.AsyncClient, db: Database, user_id: uuid.UUID, project: uuid.UUID, text: str
) -> Any:
    """The receipt's knowledge decision and the prompt for a first message, over HTTP."""
    async with db.transaction() as s:
        sid = (await chat.create_session(s, user_id, project_id=project)).id
        await append_message(s, user_id, sid, chat.NewMessage("user", text))
    got = await api.get(f"/v1/sessions/{sid}/context")
    assert got.status_code == 200, got.text
    return got.json()["receipt"]["knowledge"], got.json()["system_prompt"]


async def test_http_low_confidence_domain_messages_say_what_was_loosely_found_and_ask(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    """The audit's messages (8 pricing entries exist): a statement, a question, an instruction."""
    for text in ("Fix the pricing stuff", "How does pricing work?", "Let's rework checkout for teams"):
        knowledge, prompt = await _context(api, db, demo.user_id, demo.project_id, text)
        assert knowledge["status"] == "asked" and knowledge["confidence"] == "low", text
        packet = prompt.split("## Knowledge Context", 1)[1]
        assert "**Confidence:** Low" in packet and re.search(r"- \*\*[A-Z]{2}-\d{3}:\*\*", packet), text
        assert "tell the user what was loosely found and ask which of these they mean" in packet, text
        assert "offer to capture" in packet, text


async def test_http_empty_kb_offers_capture_for_domain_work(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    async with db.transaction() as s:
        empty = (await identity.create_project(s, demo.user_id, "No KB yet")).id
    text = "Update the usage overage billing rule on the pricing page"
    knowledge, prompt = await _context(api, db, demo.user_id, empty, text)
    assert knowledge["status"] == "loaded" and knowledge["confidence"] == "none"
    assert "knowledge base does not cover this area yet" in prompt and "offer to capture" in prompt
    knowledge, prompt = await _context(api, db, demo.user_id, empty, "Could you recommend a podcast?")
    assert knowledge["status"] == "skipped" and "Knowledge Context" not in prompt


async def test_http_entries_sharing_the_named_prefix_are_direct(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    """Before: one direct hit (medium) for a task naming the rule all eleven share."""
    suffixes = (
        "for partial refunds across foreign currencies", "for duplicate supplier invoices in one batch",
        "for credit notes issued after quarter close", "for late payment fees charged to vendors",
        "for split shipments billed on separate invoices", "for prepaid orders settled before delivery",
        "for rounding differences above one cent", "for foreign exchange gains on open items",
        "for withholding tax deducted at source", "for intercompany charges between subsidiaries",
        "for small balance write-offs under ten euros",
    )  # fmt: skip
    entries = {
        f"BR-{100 + i}": (
            "business-rules",
            f"Zephyr invoice reconciliation rule {s}",
            "How finance matches it.",
        )
        for i, s in enumerate(suffixes)
    }
    project = await write_kb(db, demo.user_id, entries)
    loaded = await _load(api, project, "Apply the Zephyr invoice reconciliation rule to the March batch")
    assert loaded["confidence"] == "high" and loaded["direct_hits"] == 11
    evidence = [e["evidence"] for e in loaded["entries"]]  # "... in one batch" is named by more words
    assert evidence.count("name prefix") >= 9 and set(evidence) <= {"name", "name prefix"}
    assert len(loaded["excluded"]) == 1


async def test_http_a_paraphrase_is_direct_by_meaning_and_lexical_only_says_so(
    api: httpx.AsyncClient, db: Database, demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = await _load(api, demo.project_id, "Why don't we charge per seat?")
    assert loaded["confidence"] == "medium" and loaded["meaning"] is True
    assert [e["code"] for e in loaded["entries"] if e["evidence"]] == ["DR-005"]
    assert next(e for e in loaded["entries"] if e["code"] == "DR-005")["evidence"] == "meaning"

    async def no_embedder() -> None:
        return None

    monkeypatch.setattr(meaning, "get_embedder", no_embedder)
    lexical = await _load(api, demo.project_id, "Why don't we charge per seat?")
    assert lexical["meaning"] is False and lexical["confidence"] == "low"
    knowledge, _ = await _context(api, db, demo.user_id, demo.project_id, "Fix the pricing stuff")
    assert knowledge["reason"].endswith("(lexical only: the local embedder is not installed)")
