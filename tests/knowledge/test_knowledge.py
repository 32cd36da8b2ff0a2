"""Knowledge base: full-text search on both dialects, load_context_for_task, the packet, updates."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import delete, update

from orrery.db.engine import Database
from orrery.db.models import KbEntry
from orrery.errors import NotFoundError, ValidationError
from orrery.knowledge.entries import entry_revisions, get_entry, update_entry
from orrery.knowledge.load_context import load_context_for_task
from orrery.knowledge.packet import NO_CONTEXT, format_context_packet
from orrery.knowledge.search import search_entries
from orrery.repo import identity, knowledge
from tests.support.factories import make_project, make_user

ENTRIES = {
    # code: (collection, name, description)
    "BR-012": (
        "business-rules",
        "Supplier field governance",
        "Only procurement may edit supplier master fields.",
    ),
    "BR-015": (
        "business-rules",
        "Approved supplier list validation",
        "Orders to unapproved suppliers are blocked.",
    ),
    "GT-019": ("glossary", "Supplier", "A company we buy goods or services from."),
    "GT-024": ("glossary", "Purchase Order", "A commitment to buy from a supplier at a price."),
    "DR-005": ("decisions", "Validation approach", "Validate on submit, not on every keystroke."),
    "FT-002": ("features", "Invoice matching", "Three-way match of invoice, order and receipt."),
    "TE-001": ("tracking-events", "order_submitted", "Fired when a purchase order is submitted."),
    "ST-001": (
        "standards",
        "Error messages",
        "Say what went wrong and what to do next, " + "in plain words " * 12,
    ),
}
RELATIONS = [
    ("BR-012", "uses_term", "GT-019"),
    ("BR-015", "uses_term", "GT-019"),
    ("BR-015", "decided_by", "DR-005"),
    ("GT-024", "tracked_by", "TE-001"),
    ("DR-005", "follows", "ST-001"),
    ("FT-002", "uses_term", "GT-024"),
]


@pytest.fixture
async def kb(db: Database) -> dict[str, Any]:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        cols: dict[str, Any] = {}
        ids: dict[str, Any] = {}
        for code, (slug, name, description) in ENTRIES.items():
            if slug not in cols:
                cols[slug] = (
                    await knowledge.create_collection(s, user.id, project.id, slug, slug.title())
                ).id
            data = {"code_paths": ["src/suppliers/governance.py"]} if code == "BR-012" else {}
            ids[code] = (
                await knowledge.create_entry(s, user.id, cols[slug], code, name, description, data)
            ).id
        for src, rel, dst in RELATIONS:
            await knowledge.relate_entries(s, user.id, ids[src], rel, ids[dst])
        return {"user": user.id, "project": project.id, "ids": ids, "owner": user}


async def _load(db: Database, kb: dict[str, Any], task: str, **kw: Any) -> Any:
    async with db.sessions() as s:
        return await load_context_for_task(s, kb["user"], kb["project"], task, **kw)


async def _search(db: Database, kb: dict[str, Any], query: str) -> list[str]:
    async with db.sessions() as s:
        return [h.code for h in (await search_entries(s, kb["user"], kb["project"], query)).hits]


async def test_full_text_search_ranks_and_tolerates_punctuation(db: Database, kb: dict[str, Any]) -> None:
    assert (await _search(db, kb, "supplier"))[0] in {"GT-019", "BR-012", "BR-015"}
    assert set(await _search(db, kb, "SUPPLIER!!! governance???")) >= {"BR-012"}
    assert (await _search(db, kb, "supplier governance"))[0] == "BR-012"
    assert await _search(db, kb, "what about br-015?") == ["BR-015"]  # a code goes first
    assert await _search(db, kb, "the and of to") == []
    assert await _search(db, kb, "!!! ??? ---") == []
    assert "TE-001" in await _search(db, kb, "submitted")  # stemming: submit / submitted


async def test_index_follows_updates_and_deletes(db: Database, kb: dict[str, Any]) -> None:
    async with db.transaction() as s:
        await s.execute(
            update(KbEntry)
            .where(KbEntry.id == kb["ids"]["FT-002"])
            .values(name="Reconciliation engine", description="Balances the ledgers.")
        )
    assert "FT-002" in await _search(db, kb, "reconciliation")
    assert "FT-002" not in await _search(db, kb, "three-way")
    async with db.transaction() as s:
        await s.execute(delete(KbEntry).where(KbEntry.id == kb["ids"]["FT-002"]))
    assert await _search(db, kb, "reconciliation") == []


async def test_search_is_scoped_to_the_project_and_user(db: Database, kb: dict[str, Any]) -> None:
    async with db.transaction() as s:
        other = await make_project(s, kb["owner"], "Other")
        stranger = await make_user(s, "Eve")
    async with db.sessions() as s:
        assert (await search_entries(s, kb["user"], other.id, "supplier")).hits == []
        with pytest.raises(NotFoundError):
            await search_entries(s, stranger.id, kb["project"], "supplier")


async def test_high_confidence_with_ranking_by_hop_then_priority(db: Database, kb: dict[str, Any]) -> None:
    r = await _load(
        db, kb, "approved supplier list validation, supplier field governance and purchase orders"
    )
    assert r.confidence == "high" and r.direct_hits >= 3
    assert {e.code: e.evidence for e in r.entries if e.hop == 0} == {
        "BR-012": "name",
        "BR-015": "name",
        "GT-019": "name",
        "GT-024": "name",
    }
    hops = [e.hop for e in r.entries]
    assert hops == sorted(hops)
    priorities = {
        "business-rules": 1,
        "glossary": 2,
        "decisions": 3,
        "features": 4,
        "standards": 5,
        "tracking-events": 9,
    }
    direct = [priorities[e.collection_slug] for e in r.entries if e.hop == 0]
    assert direct == sorted(direct)
    br12 = next(e for e in r.entries if e.code == "BR-012")
    assert br12.code_paths == ["src/suppliers/governance.py"] and br12.hop == 0
    assert len({e.code for e in r.entries}) == len(r.entries)  # deduplicated


async def test_hop_limits_and_relation_types(db: Database, kb: dict[str, Any]) -> None:
    zero = await _load(db, kb, "invoice matching", max_hops=0)
    assert [(e.code, e.hop) for e in zero.entries] == [("FT-002", 0)]
    one = await _load(db, kb, "invoice matching", max_hops=1)
    assert [(e.code, e.hop, e.relation_type, e.parent_code) for e in one.entries] == [
        ("FT-002", 0, None, None),
        ("GT-024", 1, "uses_term", "FT-002"),
    ]
    two = await _load(db, kb, "invoice matching", max_hops=2)
    assert ("TE-001", 2, "tracked_by", "GT-024") in [
        (e.code, e.hop, e.relation_type, e.parent_code) for e in two.entries
    ]
    incoming = await _load(db, kb, "error messages", max_hops=1)
    assert ("DR-005", "follows (incoming)") in [(e.code, e.relation_type) for e in incoming.entries]
    capped = await _load(db, kb, "supplier", max_results=2)
    assert len(capped.entries) == 2 and capped.total_found > 2


async def test_medium_low_and_none(db: Database, kb: dict[str, Any]) -> None:
    medium = await _load(db, kb, "invoice matching")
    assert medium.confidence == "medium" and medium.direct_hits in (1, 2)
    low = await _load(db, kb, "keystroke latency budget dashboards caching retries timeouts")
    assert low.confidence == "low" and low.direct_hits == 0 and low.entries
    # the walk starts from the partial matches themselves (hop 0); hops never exceed max_hops
    assert [(e.code, e.hop, e.relation_type) for e in low.entries][0] == ("DR-005", 0, "partial_match")
    assert max(e.hop for e in low.entries) <= 2 and low.distinctive
    none = await _load(db, kb, "kubernetes autoscaling")
    assert none.confidence == "none" and none.entries == [] and format_context_packet(none) == NO_CONTEXT


async def test_preview_is_150_chars_at_a_word_boundary(db: Database, kb: dict[str, Any]) -> None:
    r = await _load(db, kb, "error messages")
    st = next(e for e in r.entries if e.code == "ST-001")
    assert len(st.description_preview) <= 151 and st.description_preview.endswith("…")
    assert ENTRIES["ST-001"][2].startswith(st.description_preview[:-1])
    assert not st.description_preview[:-1].endswith(" ")


async def test_packet_golden(db: Database, kb: dict[str, Any]) -> None:
    """BR-012 and GT-019 are named ("supplier" alone is in half the KB): medium. The walk starts
    from the top 3 hits, the partial match BR-015 too, so its decision DR-005 is found; cut by
    `max_results`, it is named in the packet."""
    r = await _load(db, kb, "supplier governance", max_hops=1, max_results=3)
    assert format_context_packet(r) == (
        "## Context Loaded\n"
        "**Confidence:** Medium\n"
        "**Matched:** 3 entries across 2 collections\n"
        "\n"
        "### Business-Rules (2)\n"
        "- **BR-012:** Supplier field governance (code: src/suppliers/governance.py)\n"
        "- **BR-015:** Approved supplier list validation\n"
        "\n"
        "### Glossary (1)\n"
        "- **GT-019:** Supplier\n"
        "\n"
        "_Not shown (ranked below max_results (3)): DR-005 Validation approach._\n"
        "\n"
        "_Use `get_entry` for full details on any entry._"
    )
    assert [(e.code, e.evidence, e.relation_type) for e in r.entries] == [
        ("BR-012", "name", None),
        ("BR-015", None, "partial_match"),
        ("GT-019", "name", None),
    ]  # all at hop 0: collection priority first (seed 000), then direct before partial


async def test_one_shared_common_word_is_not_a_direct_hit(db: Database, kb: dict[str, Any]) -> None:
    """ "order" is in half the KB and "thing" in none: one common word is never a direct hit, and a
    prefix ("us" of "usage") never counts; an entry's own name does ("supplier" names GT-019)."""
    vague = await _load(db, kb, "What about the order thing?")
    assert vague.direct_hits == 0 and vague.confidence == "low" and not vague.distinctive
    focused = await _load(db, kb, "supplier")
    assert focused.confidence == "medium"
    assert [e.code for e in focused.entries if e.evidence] == ["GT-019"]
    prefix = await _load(db, kb, "Let us sub the purch ones")  # prefixes of "submitted", "purchase"
    assert prefix.direct_hits == 0 and not prefix.distinctive
    long_task = await _load(db, kb, "Add three-way invoice matching for purchase orders from suppliers")
    assert long_task.direct_hits >= 1


async def test_get_entry_and_update_with_provenance(db: Database, kb: dict[str, Any]) -> None:
    async with db.transaction() as s:
        from orrery.repo import chat

        session_ = await chat.create_session(s, kb["user"], project_id=kb["project"])
        entry = await update_entry(
            s,
            kb["user"],
            kb["project"],
            "gt-019",
            add_code_paths=["src/suppliers/model.py", "src/suppliers/model.py"],
            correction="We say vendor in the UI.",
            session_id=session_.id,
        )
    assert entry.data["code_paths"] == ["src/suppliers/model.py"]
    assert entry.data["corrections"][0]["text"] == "We say vendor in the UI."
    assert {(r.code, r.direction) for r in entry.related} == {("BR-012", "incoming"), ("BR-015", "incoming")}
    async with db.sessions() as s:
        revisions = await entry_revisions(s, kb["user"], kb["project"], "GT-019")
        full = await get_entry(s, kb["user"], kb["project"], "GT-019")
    assert revisions[0].session_id == session_.id and revisions[0].user_id == kb["user"]
    assert revisions[0].changes["added_code_paths"] == ["src/suppliers/model.py"]
    assert full.data == entry.data


async def test_update_entry_is_validated_and_scoped(db: Database, kb: dict[str, Any]) -> None:
    async with db.transaction() as s:
        viewer = await make_user(s, "Vic")
        stranger = await make_user(s, "Eve")
        await identity.add_member(s, kb["user"], kb["project"], viewer.id, "viewer")
    async with db.sessions() as s:
        with pytest.raises(NotFoundError):
            await update_entry(s, stranger.id, kb["project"], "BR-012", correction="x")
        with pytest.raises(ValidationError, match="read-only"):
            await update_entry(s, viewer.id, kb["project"], "BR-012", correction="x")
        with pytest.raises(ValidationError, match="relative file path"):
            await update_entry(s, kb["user"], kb["project"], "BR-012", add_code_paths=["../etc/passwd"])
        with pytest.raises(ValidationError, match="nothing to update"):
            await update_entry(s, kb["user"], kb["project"], "BR-012")
        with pytest.raises(ValidationError, match="at most 1000 characters"):
            await update_entry(s, kb["user"], kb["project"], "BR-012", correction="word " * 300)
        with pytest.raises(NotFoundError):
            await update_entry(s, kb["user"], kb["project"], "XX-999", correction="x")
