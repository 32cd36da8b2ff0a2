"""Issue 52 §1 through the doors: the first message with searchable content decides, small talk and
conversation decide nothing and load nothing, low confidence asks for every shape of domain message."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from orrery.knowledge import message_kind
from orrery.knowledge.message_kind import lexical_kind
from tests.knowledge.test_seed_000_doors import _context, write_kb

SHIPPING_KB = {
    "BR-101": ("business-rules", "Cold chain temperature range", "Chilled parcels stay between 2 and 8 °C."),
    "BR-102": ("business-rules", "Free delivery threshold", "Orders over 50 euros ship free to customers."),
    "BR-103": ("business-rules", "Hazmat declarations", "Dangerous goods need a signed declaration."),
    "GT-201": ("glossary", "Carrier", "The company that moves a parcel; shipping is booked per carrier."),
}


async def _turn(api: httpx.AsyncClient, sid: str, text: str) -> dict[str, Any]:
    got = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": text}, headers={"Accept": "application/json"}
    )
    assert got.status_code == 200, got.text
    return dict(got.json())


async def _session(api: httpx.AsyncClient, project: uuid.UUID) -> str:
    made = await api.post("/v1/sessions", json={"project_id": str(project)})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


@pytest.mark.parametrize("opening", ["Hello", "Hi!", "Thanks!", "Let's plan my week."])
async def test_small_talk_first_decides_nothing_and_the_first_real_question_loads(
    api: httpx.AsyncClient, demo: Any, opening: str
) -> None:
    sid = await _session(api, demo.project_id)
    await _turn(api, sid, opening)
    context = (await api.get(f"/v1/sessions/{sid}/context")).json()
    assert "Knowledge Context" not in context["system_prompt"]
    await _turn(api, sid, "How does overage billing work?")
    context = (await api.get(f"/v1/sessions/{sid}/context")).json()
    assert context["receipt"]["knowledge"]["status"] == "reused"
    assert "## Knowledge Context" in context["system_prompt"] and "BR-012" in context["system_prompt"]


NON_DOMAIN = (
    "How is the team doing?",
    "Let's plan my week.",
    "What's the weather going to be like tomorrow?",
    "I'm feeling a bit overwhelmed today.",
    "What can you do?",
)


async def test_non_domain_messages_load_nothing_over_http(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    for text in NON_DOMAIN:
        knowledge, prompt = await _context(api, db, demo.user_id, demo.project_id, text)
        assert knowledge["status"] == "skipped" and "Knowledge Context" not in prompt, (text, knowledge)


async def test_low_confidence_asks_for_statements_and_instructions_too(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    """A word only a description holds ("shipping") or a vague noun ("the temperature thing")."""
    project = await write_kb(db, demo.user_id, SHIPPING_KB)
    for text in ("Fix the temperature thing", "Make shipping smoother for our customers"):
        knowledge, prompt = await _context(api, db, demo.user_id, project, text)
        assert knowledge["status"] == "asked", (text, knowledge)
        assert "ask which of these they mean" in prompt, text


async def test_without_the_embedder_conversation_is_told_by_the_example_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def none() -> None:
        return None

    monkeypatch.setattr(message_kind, "get_embedder", none)
    assert await message_kind.message_kind("Is it going to rain this weekend?") == "chat"
    assert await message_kind.message_kind("Update the rule for overdue invoices") == "domain"
    assert lexical_kind("How are refunds calculated?") == "domain"
