"""Issue 52 §3 through a chat turn with the offline model over HTTP: with a packet loaded, an
instruction-shaped task is answered from the packet's entries, and an imperative search ("Search
the knowledge base for hazmat declarations") works as the question form does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from tests.knowledge.test_capture import _session, _turn
from tests.knowledge.test_first_domain_message import SHIPPING_KB
from tests.knowledge.test_seed_000_doors import write_kb


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Search the knowledge base for hazmat declarations", "BR-103"),
        ("What do we know about hazmat declarations?", "BR-103"),
        ("Look up the free delivery threshold in the KB", "BR-102"),
        ("Update the free delivery threshold for express orders", "BR-102"),
        ("Change the cold chain temperature range for vaccines", "BR-101"),
    ],
)
async def test_instructions_and_imperative_searches_answer_from_the_packet(
    api: httpx.AsyncClient, db: Database, demo: Any, text: str, code: str
) -> None:
    project = await write_kb(db, demo.user_id, SHIPPING_KB)
    reply = await _turn(api, await _session(api, project), text)
    assert code in reply, reply
    assert "I found no task" not in reply and "nothing in Orrery's context" not in reply, reply


async def test_an_imperative_search_for_what_the_kb_lacks_says_so(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    project = await write_kb(db, demo.user_id, SHIPPING_KB)
    reply = await _turn(api, await _session(api, project), "Search the knowledge base for parking permits")
    assert "does not cover" in reply or "No entries match" in reply, reply


async def test_an_instruction_routed_to_the_accountability_partner_is_no_dead_end(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    project = await write_kb(db, demo.user_id, SHIPPING_KB)
    body = {"project_id": str(project), "agent": "accountability_partner"}
    made = await api.post("/v1/sessions", json=body)
    assert made.status_code == 201, made.text
    reply = await _turn(api, str(made.json()["id"]), "Update the free delivery threshold for express orders")
    assert "BR-102" in reply, reply
