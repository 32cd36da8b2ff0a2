"""The forgetting sweep (issue 51 §2): unique markers are planted through every way something is
remembered (said in a chat, "remember that" through the offline model's `remember_fact`, a newer fact
replacing it, a learned summary, digests, a stored receipt), one forget control runs on one worker
(the app the `api` client drives), and then:

- **every table and every column** of the database, enumerated by inspection (a new table or derived
  store is covered without touching this test), on both dialects, is searched for the markers: only
  what the control documents it keeps may hold one (e.g. the person's own forgotten turn, in its own
  chat; `docs/concepts/memory-controls.md`);
- **everything the model sees** on a second worker's next turn, in a new chat that asks about the
  markers (a second app, its model a FunctionModel that records each request), holds none.

The second app shares this process's caches with the first: what is forgotten reaches it only
through the database (the lineage never touches a process's cache), exactly as on another worker.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from orrery.agents.patterns import refresh_user_summary
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.memory.digests import digest_chat
from orrery.repo import sessions
from tests.support.db_sweep import cell_text, every_row
from tests.support.models import streaming
from tests.support.serving import serving

MARK = re.compile(r"zqx[a-z]+")
FACT_OLD, FACT_NEW, SAID, INSTRUCTION = "zqxlockold", "zqxlocknew", "zqxsaidplain", "zqxruletone"
ALL = {FACT_OLD, FACT_NEW, SAID, INSTRUCTION}

QUESTION = "What is my locker code, what did I name the side project, how do I sign answers?"
"""The second worker's question: it shares words with everything planted, so recall would find it."""
FACTS = {FACT_OLD, FACT_NEW, INSTRUCTION}
"""What forgetting the facts forgets (the plain remark is no fact: it stays remembered)."""

Kept = Callable[[str, dict[str, Any]], bool]
"""Whether a row (table, its values) holding a marker is what the control documents it keeps."""


async def _turn(api: httpx.AsyncClient, sid: str, content: str) -> dict[str, Any]:
    response = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": content}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _chat(api: httpx.AsyncClient, **fields: Any) -> str:
    made = await api.post("/v1/sessions", json={"title": "sweep", **fields})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _summariser(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The pattern analyst's model: a struggle naming every marker it was shown."""
    seen = sorted(set(MARK.findall(str(messages))))
    args = {"patterns": [], "wins": [], "struggles": [f"Keeps coming back to {m}" for m in seen]}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


async def _plant(api: httpx.AsyncClient, db: Database, user_id: uuid.UUID) -> dict[str, str]:
    """Chat A: a fact, the newer fact replacing it (its tool result quotes the old one), a plain
    remark and a standing instruction; chat B: a turn that recalls A. Then both chats' digests, the
    learned summary and B's stored receipt (what the web inspector keeps). Returns the chat ids."""
    a, b = await _chat(api), await _chat(api)
    await _turn(api, a, f"Remember that my locker code is {FACT_OLD}.")
    await _turn(api, a, f"Remember that my locker code is {FACT_NEW}.")
    await _turn(api, a, f"I named the side project {SAID} yesterday.")
    await _turn(api, a, f"Always sign your answers with {INSTRUCTION} in every chat.")
    facts = (await api.get("/v1/me/facts", params={"include_history": "true"})).json()
    texts = " ".join(f["text"] for f in facts)
    assert {FACT_OLD, FACT_NEW, INSTRUCTION} <= set(MARK.findall(texts)), facts
    answered = await _turn(api, b, "What was my locker code again, and what did I name the side project?")
    async with db.transaction() as s:  # the inspector's receipt: the prompt the turn saw
        await sessions.save_turn_receipt(s, user_id, b, {"system_prompt": json.dumps(answered)})
    for chat in (a, b):
        assert await digest_chat(db, uuid.UUID(chat), now=_far_future()) == "built"
    await refresh_user_summary(db, FunctionModel(_summariser), user_id)
    assert ALL & set(MARK.findall(await _dump(db))), "nothing was planted"
    return {"a": a, "b": b}


def _far_future() -> Any:
    from datetime import UTC, datetime

    return datetime(2100, 1, 1, tzinfo=UTC)


async def _dump(db: Database) -> str:
    return "\n".join(cell_text(v) for _, row in await every_row(db, ALL) for v in row.values())


async def _leftovers(db: Database, kept: Kept, gone: set[str]) -> list[tuple[str, set[str], str]]:
    """Each row still holding a marker of `gone` that the control does not keep."""
    found = []
    for table, row in await every_row(db, ALL):
        line = " ".join(cell_text(v) for v in row.values())
        marks = set(MARK.findall(line)) & gone
        if marks and not kept(table, row):
            found.append((table, marks, line[:600]))
    return found


async def _next_turn_sees(settings: Settings, api_key: str, asking: str) -> str:
    """Everything the model is sent on another worker's next turn, in a new chat."""
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(str(messages))
        return ModelResponse(parts=[TextPart("Noted.")])

    app = create_app(settings)
    async with serving(app, api_key) as other:
        app.state.orchestrator.model_factory = lambda _n, _s: streaming(respond)
        await _turn(other, await _chat(other), asking)
    assert seen, "the model was never asked"
    return "\n".join(seen)


def _forgotten_turn_in(*chats: str) -> Kept:
    """Kept: a message of one of `chats` marked forgotten or superseded (it stays in its own chat)."""

    def kept(table: str, row: dict[str, Any]) -> bool:
        return (
            table == "messages"
            and str(row.get("session_id")).replace("-", "") in {c.replace("-", "") for c in chats}
            and (row.get("forgotten_at") is not None or row.get("superseded_at") is not None)
        )

    return kept


def _messages_of(*chats: str) -> Kept:
    def kept(table: str, row: dict[str, Any]) -> bool:
        return table == "messages" and str(row.get("session_id")).replace("-", "") in {
            c.replace("-", "") for c in chats
        }

    return kept


async def _fact_ids(api: httpx.AsyncClient) -> list[str]:
    return [f["id"] for f in (await api.get("/v1/me/facts")).json()]


@dataclass(frozen=True)
class Sweep:
    """What a control runs with: the first worker's client, the planted chats, the settings and demo."""

    api: httpx.AsyncClient
    chats: dict[str, str]
    settings: Settings
    demo: Any


Control = Callable[[Sweep], Awaitable[Kept]]
"""Runs one forget control on the planted chats; what it keeps."""


async def _delete_each_fact(sweep: Sweep) -> Kept:
    api, chats = sweep.api, sweep.chats
    for fid in await _fact_ids(api):
        assert (await api.delete(f"/v1/me/facts/{fid}")).status_code == 204
    return _forgotten_turn_in(chats["a"], chats["b"])


async def _forget_fact_tool(sweep: Sweep) -> Kept:
    """The agent's `forget_fact` (the offline model), once per current fact, in chat B."""
    api, chats = sweep.api, sweep.chats
    await _turn(api, chats["b"], f"Forget that my locker code is {FACT_NEW}.")
    await _turn(api, chats["b"], f"Forget that I always sign answers with {INSTRUCTION}.")
    left = (await api.get("/v1/me/facts")).json()
    assert not [f for f in left if set(MARK.findall(f["text"])) & ALL], left
    return _forgotten_turn_in(chats["a"], chats["b"])


async def _tool_door(sweep: Sweep) -> Kept:
    """`forget_fact` through the HTTP tools door (the one MCP and `orrery tool` share)."""
    api, chats = sweep.api, sweep.chats
    for fid in await _fact_ids(api):
        done = await api.post("/v1/tools/forget_fact", json={"arguments": {"fact_id": fid}})
        assert done.status_code == 200, done.text
    return _forgotten_turn_in(chats["a"], chats["b"])


async def _delete_chats_with_facts(sweep: Sweep) -> Kept:
    api, chats = sweep.api, sweep.chats
    for chat in (chats["a"], chats["b"]):
        assert (await api.delete(f"/v1/sessions/{chat}?forget_facts=true")).status_code == 204
    return lambda table, row: False


async def _remember_off(sweep: Sweep) -> Kept:
    api, chats = sweep.api, sweep.chats
    for chat in (chats["a"], chats["b"]):
        assert (await api.patch(f"/v1/sessions/{chat}", json={"remember": False})).status_code == 200
    return _messages_of(chats["a"], chats["b"])  # its own chat keeps its transcript


async def _web_forget(sweep: Sweep) -> Kept:
    """The facts page's forget button, as a signed-in browser posts it."""
    from tests.support.web import signed_in_client

    ids = await _fact_ids(sweep.api)
    async with signed_in_client(sweep.settings, sweep.demo) as browser:
        page = await browser.get("/me/facts")
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
        assert token, page.text[:300]
        for fid in ids:
            done = await browser.post(f"/me/facts/{fid}/forget", data={"csrf_token": token.group(1)})
            assert done.status_code == 303, done.text
    return _forgotten_turn_in(sweep.chats["a"], sweep.chats["b"])


async def _cli_forget(sweep: Sweep) -> Kept:
    """`orrery facts forget`, the CLI door, on the same database."""
    api, chats = sweep.api, sweep.chats
    from tests.support.cli import invoke

    user = (await api.get("/v1/me")).json()["id"]
    for fid in await _fact_ids(api):
        code, output = await asyncio.to_thread(invoke, "facts", "forget", "--user", user, fid)
        assert code == 0, output
    return _forgotten_turn_in(chats["a"], chats["b"])


async def _edit_away(sweep: Sweep) -> Kept:
    """An edit of the message the standing instruction was captured from takes it back."""
    api, chats = sweep.api, sweep.chats
    page = (await api.get(f"/v1/sessions/{chats['a']}")).json()["messages"]
    seq = max(m["seq"] for m in page if m["role"] == "user")
    edited = await api.post(
        f"/v1/sessions/{chats['a']}/messages/{seq}/edit",
        json={"content": "Thanks, that is all for now."},
        headers={"Accept": "application/json"},
    )
    assert edited.status_code == 200, edited.text
    return _forgotten_turn_in(chats["a"], chats["b"])


async def _delete_chat_keep_facts(sweep: Sweep) -> Kept:
    """Deleting chat A without `forget_facts`: what was said there goes, its facts stay (and the
    turns quoting them, which the person kept)."""
    api, chats = sweep.api, sweep.chats
    assert (await api.delete(f"/v1/sessions/{chats['a']}")).status_code == 204
    return lambda table, row: False


async def _store_false(sweep: Sweep) -> Kept:
    """OpenAI's `store: false` on the existing chats (named by `X-Orrery-Session`)."""
    api, chats = sweep.api, sweep.chats
    for chat in (chats["a"], chats["b"]):
        done = await api.post(
            "/v1/chat/completions",
            json={"model": "orrery", "messages": [{"role": "user", "content": "ok"}], "store": False},
            headers={"X-Orrery-Session": chat},
        )
        assert done.status_code == 200, done.text
    return _messages_of(chats["a"], chats["b"])


async def _vercel_remember(sweep: Sweep) -> Kept:
    """The Vercel AI SDK body field `remember: false`, with the next message of each chat."""
    api, chats = sweep.api, sweep.chats
    for chat in (chats["a"], chats["b"]):
        message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "ok"}]}
        body = {"trigger": "submit-message", "id": chat, "messages": [message], "remember": False}
        done = await api.post(f"/v1/sessions/{chat}/chat", json=body)
        assert done.status_code == 200, done.text
    return _messages_of(chats["a"], chats["b"])


CONTROLS: dict[str, tuple[Control, set[str]]] = {
    "fact delete (CLI)": (_cli_forget, FACTS),
    "fact delete (web)": (_web_forget, FACTS),
    "an edit of the source message": (_edit_away, {INSTRUCTION}),
    "chat delete without forget_facts": (_delete_chat_keep_facts, {SAID}),
    "store: false (OpenAI)": (_store_false, ALL),
    "remember: false (Vercel)": (_vercel_remember, ALL),
    "fact delete (HTTP)": (_delete_each_fact, FACTS),
    "forget_fact (agent)": (_forget_fact_tool, FACTS),
    "forget_fact (tools door)": (_tool_door, FACTS),
    "chat delete with forget_facts": (_delete_chats_with_facts, ALL),
    "remember: false": (_remember_off, ALL),
}
"""Each control and the markers it forgets."""


@pytest.mark.parametrize("control", list(CONTROLS))
async def test_after_each_forget_no_marker_is_anywhere(
    control: str,
    api: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    demo: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.cli import cli_environment

    environment = cli_environment(settings.database_url, monkeypatch)
    next(environment)
    chats = await _plant(api, db, demo.user_id)
    run, gone = CONTROLS[control]
    kept = await run(Sweep(api, chats, settings, demo))
    assert await _leftovers(db, kept, gone) == []
    seen = await _next_turn_sees(
        settings,
        demo.api_key,
        "What is my locker code, what did I name the side project, how do I sign answers?",
    )
    assert set(MARK.findall(seen)) & gone == set()


async def test_without_a_forget_the_next_turn_sees_what_was_planted(
    api: httpx.AsyncClient, db: Database, settings: Settings, demo: Any
) -> None:
    """The sweep's eyes work: nothing forgotten, the other worker's prompt holds every marker (the
    facts and the instruction in the profile, the remark recalled and in the learned summary)."""
    await _plant(api, db, demo.user_id)
    seen = await _next_turn_sees(settings, demo.api_key, QUESTION)
    assert set(MARK.findall(seen)) >= {FACT_NEW, INSTRUCTION, SAID}


async def test_recall_off_deletes_the_stored_receipts_and_recalls_no_other_chat(
    api: httpx.AsyncClient, db: Database, settings: Settings, demo: Any
) -> None:
    """`recall_across_chats` off forgets nothing stored (the facts and summary are the person's
    profile, not recall), but the receipts (prompts that recalled other chats) go, and the next turn
    on another worker recalls no other chat's words."""
    await _plant(api, db, demo.user_id)
    assert (await api.patch("/v1/me/memory", json={"recall_across_chats": False})).status_code == 200
    assert [t for t, _ in await every_row(db, ALL) if t == "turn_receipts"] == []
    seen = await _next_turn_sees(settings, demo.api_key, QUESTION)
    assert "side project" not in seen.replace(QUESTION, "")


async def test_a_title_taken_from_a_forgotten_first_message_goes_with_it(
    api: httpx.AsyncClient, db: Database
) -> None:
    """The OpenAI door titles a chat from its first message, and a title is shown to other chats
    (recall's labels, the timeline): forgetting the fact said there untitles the chat."""
    said = f"Remember that my gate code is {FACT_OLD}."
    done = await api.post("/v1/chat/completions", json={"model": "orrery", "messages": [_said(said)]})
    assert done.status_code == 200, done.text
    titles = [c["title"] or "" for c in (await api.get("/v1/sessions")).json()["items"]]
    assert any(FACT_OLD in t for t in titles), titles
    for fid in await _fact_ids(api):
        assert (await api.delete(f"/v1/me/facts/{fid}")).status_code == 204
    titles = [c["title"] or "" for c in (await api.get("/v1/sessions")).json()["items"]]
    assert not [t for t in titles if FACT_OLD in t]
    forgotten = [row for table, row in await every_row(db, ALL) if row.get("forgotten_at") is not None]
    assert await _leftovers(db, lambda table, row: row in forgotten, {FACT_OLD}) == []


def _said(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}
