"""`GET /v1/sessions/{id}/context?scoping=&compare=&at=`: previews and comparisons of scoping
strategies on the caller's own sessions, storing nothing, with clear 4xx answers for bad values."""

from __future__ import annotations

from typing import Any

import httpx

from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import identity
from tests.support.conversation import TOPICS, store_summary, stored, write_conversation


async def _conversation(api: httpx.AsyncClient, demo: Any, db: Database) -> str:
    made = await api.post("/v1/sessions", json={"project_id": str(demo.project_id), "agent": "planner"})
    sid = str(made.json()["id"])
    await write_conversation(db, demo.user_id, sid)
    return sid


def _row(comparison: dict[str, Any], key: str) -> dict[str, Any]:
    return next(u for u in comparison["units"] if u["kind"] == "message" and u["key"] == key)


async def test_compare_lines_strategies_up_and_stores_nothing(
    api: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid = await _conversation(api, demo, db)
    before = await stored(db, sid)
    response = await api.get(f"/v1/sessions/{sid}/context", params={"compare": "last_n,token_budget,summary"})
    assert response.status_code == 200, response.text
    comparison = response.json()
    assert comparison["strategies"] == ["last_n", "token_budget", "summary"] and comparison["at"] is None
    assert [t["name"] for t in comparison["totals"]] == comparison["strategies"]
    assert _row(comparison, "seq 1")["kept_by"] == ["token_budget"]  # last_n keeps the planner's last 10
    assert _row(comparison, "seq 1")["verdicts"]["summary"]["reason"].startswith("in the running summary")
    assert _row(comparison, "seq 16")["agreement"] == "all"
    summary = next(u for u in comparison["units"] if u["kind"] == "summary")
    assert summary["kept_by"] == ["summary"] and summary["tokens"]
    assert any("summary extended" in n for n in comparison["totals"][2]["notes"])
    assert await stored(db, sid) == before == (16, [])  # the extended summary was rolled back
    preview = await api.get(f"/v1/sessions/{sid}/context", params={"scoping": "summary"})
    assert preview.status_code == 200 and preview.json()["receipt"]["strategy"] == "summary"
    assert preview.json()["messages"][0]["role"] == "system"  # the summary it built...
    assert await stored(db, sid) == before  # ...and did not keep
    plain = (await api.get(f"/v1/sessions/{sid}/context")).json()
    assert plain["receipt"]["strategy"] == "relevance"  # the session's own setting is untouched


async def test_at_shows_the_view_a_past_turn_had(api: httpx.AsyncClient, demo: Any, db: Database) -> None:
    sid = await _conversation(api, demo, db)
    old = await api.get(f"/v1/sessions/{sid}/context", params={"scoping": "token_budget", "at": 5})
    assert old.status_code == 200, old.text
    assert [m["content"] for m in old.json()["messages"]][-3:] == [
        TOPICS[1],
        f"Noted: {TOPICS[1].lower()}",
        TOPICS[2],
    ]
    assert len(old.json()["messages"]) == 5
    latest = await api.get(f"/v1/sessions/{sid}/context", params={"compare": "last_n,relevance", "at": 15})
    comparison = latest.json()
    assert comparison["latest_seq"] == 15 and comparison["query"] == TOPICS[-1]
    assert _row(comparison, "seq 1")["kept_by"] == ["relevance"]  # recalled: it answers the question
    assert _row(comparison, "seq 1")["verdicts"]["relevance"]["score"] is not None
    assert not any(u["key"] == "seq 16" for u in comparison["units"])


async def test_a_past_view_hides_a_summary_written_later_and_keeps_it(
    api: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid = await _conversation(api, demo, db)
    await store_summary(db, sid, through=14)
    before = await stored(db, sid)
    response = await api.get(f"/v1/sessions/{sid}/context", params={"compare": "summary,last_n", "at": 11})
    comparison = response.json()
    assert response.status_code == 200 and "rebuilt for this view, not saved" in comparison["notes"][0]
    summary = next(u for u in comparison["units"] if u["kind"] == "summary")
    assert summary["key"] == "seq 1-5"  # what turn 11 would have summarized, not seq 1-14
    assert await stored(db, sid) == before


async def test_bad_values_answer_a_clear_4xx(api: httpx.AsyncClient, demo: Any, db: Database) -> None:
    sid = await _conversation(api, demo, db)
    path = f"/v1/sessions/{sid}/context"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"compare": "last_n,nope"}, "unknown scoping strategy 'nope'; known: "),
        ({"compare": "last_n"}, "compare needs 2 to 6 strategy names"),
        ({"compare": "last_n,,last_n"}, "compare needs 2 to 6"),
        ({"scoping": "nope"}, "known: "),
        ({"scoping": "last_n", "compare": "last_n,relevance"}, "not both"),
        ({"at": 4}, "`at` must be the seq of a user message"),
        ({"at": 99, "compare": "last_n,relevance"}, "no user message has that seq"),
    ]
    for params, words in cases:
        response = await api.get(path, params=params)
        assert response.status_code == 422, (params, response.text)
        assert words in response.json()["error"]["message"], params
    invalid: list[dict[str, Any]] = [{"at": 0}, {"at": "x"}, {"at": 2**40}, {"scoping": "x" * 65}]
    for params in invalid:
        response = await api.get(path, params=params)
        assert response.status_code == 422 and response.json()["error"]["code"] == "invalid", params
    assert await stored(db, sid) == (16, [])


async def test_another_users_session_is_not_found(
    api: httpx.AsyncClient, demo: Any, db: Database, settings: Settings
) -> None:
    made = await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})
    sid = str(made.json()["id"])
    async with db.transaction() as s:
        eve = await identity.create_user(s, "eve@example.org", "Eve")
        _, key = await identity.issue_api_key(s, eve.id, "k", settings.secret_key)
    headers = {"Authorization": f"Bearer {key}"}
    for params in ({"compare": "last_n,relevance"}, {"scoping": "last_n"}, {"at": 1}):
        response = await api.get(f"/v1/sessions/{sid}/context", params=params, headers=headers)
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found", params


async def test_the_context_and_its_previews_show_what_came_from_earlier_chats(
    api: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage, create_session

    async with db.transaction() as s:
        earlier = await create_session(s, demo.user_id, project_id=demo.project_id, title="Ferry notes")
        for role, text in (
            ("user", "The Kirkwall ferry leaves at 7:15 from pier 3."),
            ("assistant", "Noted."),
        ):
            await append_message(s, demo.user_id, earlier.id, NewMessage(role, text))
    made = await api.post("/v1/sessions", json={"project_id": str(demo.project_id)})
    sid = str(made.json()["id"])
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, NewMessage("user", "When does the Kirkwall ferry leave?"))
    for params in ({}, {"at": 1}, {"scoping": "last_n"}):
        context = (await api.get(f"/v1/sessions/{sid}/context", params=params)).json()
        section = context["receipt"]["sections"][-1]
        assert section["name"] == "earlier_chats" and section["title"] == "From earlier chats"
        item = section["included"][0]
        assert {k: item[k] for k in ("kind", "chat_id", "chat_title", "seq")} == {
            "kind": "earlier_message",
            "chat_id": str(earlier.id),
            "chat_title": "Ferry notes",
            "seq": 1,
        }
        assert item["date"] and item["tokens"] > 0 and item["score"] > 0 and "kirkwal" in item["reason"]
        assert "7:15 from pier 3" in context["system_prompt"]
    compared = (await api.get(f"/v1/sessions/{sid}/context", params={"compare": "last_n,relevance"})).json()
    for totals in compared["totals"]:
        assert totals["earlier_chats"][0]["chat_title"] == "Ferry notes"
        assert 0 < totals["earlier_chats_tokens"] <= totals["earlier_chats_budget"]
