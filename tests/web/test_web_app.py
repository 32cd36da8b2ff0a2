"""The web app over HTTP (in-process, both dialects): sign-in, cookies, CSRF, scoping, escaping,
the streamed turn's receipt and the knowledge capture form. The browser tests drive the same pages."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.knowledge.entries import get_entry
from orrery.memory.messages import append_message
from orrery.repo import chat, identity, web_tokens
from tests.support.factories import make_user
from tests.support.web import login_token, sign_in


@pytest.fixture
async def app(settings: Settings, demo: Any) -> AsyncIterator[Any]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


def _client(app: Any, base: str = "http://orrery") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base)


@pytest.fixture
async def client(app: Any, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client signed in with the demo user's API key."""
    async with _client(app) as client:
        response = await sign_in(client, demo.api_key)
        assert response.status_code == 303 and response.headers["location"] == "/"
        yield client


async def _csrf(client: httpx.AsyncClient, path: str) -> str:
    page = await client.get(path, follow_redirects=True)
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


async def _session(client: httpx.AsyncClient, demo: Any, token: str) -> str:
    made = await client.post("/sessions", data={"csrf_token": token, "project_id": str(demo.project_id)})
    assert made.status_code == 303
    return str(made.headers["location"]).removeprefix("/s/")


async def test_sign_in_sets_a_strict_http_only_cookie(app: Any, demo: Any) -> None:
    async with _client(app) as client:
        assert (await client.get("/")).headers["location"] == "/login"
        token = await login_token(client)
        forged = await client.post(
            "/login",
            data={"api_key": demo.api_key, "login_token": token},
            headers={"Origin": "https://evil.example"},
        )
        assert forged.status_code == 403 and "orrery_session" not in forged.headers.get("set-cookie", "")
        refused = await client.post("/login", data={"api_key": "orr_nothing", "login_token": token})
        assert refused.status_code == 401 and "malformed API key" in refused.text
        ok = await client.post("/login", data={"api_key": demo.api_key, "login_token": token})
        cookie = ok.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "secure" not in cookie
        home = await client.get("/", follow_redirects=True)
        assert home.status_code == 200 and "Maya Chen" in home.text
        policy = home.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert not re.search(r"<script(?![^>]*\bsrc=)", home.text), "no inline script"
    async with _client(app, "https://orrery") as secure:
        cookie = (await sign_in(secure, demo.api_key)).headers["set-cookie"].lower()
        assert "; secure" in cookie


async def test_sign_in_needs_the_forms_login_token_even_without_an_origin(app: Any, demo: Any) -> None:
    """Login CSRF: another site's form posting the attacker's key, from a client that sends no
    `Origin`, must not sign the browser in. It can send neither our form's token nor its cookie."""
    async with _client(app) as victim:
        bare = await victim.post("/login", data={"api_key": demo.api_key})
        assert bare.status_code == 403 and "expired or did not come from this site" in bare.text
        assert "orrery_session" not in victim.cookies
        async with _client(app) as attacker:
            stolen = await login_token(attacker)  # a token of the attacker's own browser
        forged = await victim.post("/login", data={"api_key": demo.api_key, "login_token": stolen})
        assert forged.status_code == 403 and "orrery_session" not in victim.cookies
        again = await victim.post(  # the refusal showed a fresh form: its token works
            "/login", data={"api_key": demo.api_key, "login_token": _form_token(forged.text)}
        )
        assert again.status_code == 303 and "orrery_session" in victim.cookies


def _form_token(page: str) -> str:
    found = re.search(r'name="login_token" value="([0-9a-f]+)"', page)
    assert found, page[:500]
    return found.group(1)


async def test_login_link_works_once_and_sign_out_ends_the_session(
    app: Any, demo: Any, db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        token = await web_tokens.issue_login_link_token(s, demo.user_id, settings.secret_key)
    async with _client(app) as client:
        assert (await client.get("/login/link", params={"token": token})).status_code == 303
        cookie = client.cookies["orrery_session"]
        again = await client.get("/login/link", params={"token": token})
        assert again.status_code == 401 and "already used" in again.text
        csrf = await _csrf(client, "/")
        assert (await client.post("/logout", data={"csrf_token": csrf})).status_code == 303
    async with _client(app) as stale:
        stale.cookies.set("orrery_session", cookie)
        assert (await stale.get("/")).headers["location"] == "/login"


async def test_revoking_the_api_key_ends_the_browser_session(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database, settings: Settings
) -> None:
    assert (await client.get("/")).status_code in (200, 303)
    async with db.transaction() as s:
        await identity.revoke_api_keys(s, demo.user_id, "demo")
    assert (await client.get("/")).headers["location"] == "/login"


async def test_revoking_the_api_key_also_ends_sessions_from_a_login_link(
    app: Any, demo: Any, db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        token = await web_tokens.issue_login_link_token(s, demo.user_id, settings.secret_key)
        unused = await web_tokens.issue_login_link_token(s, demo.user_id, settings.secret_key)
    async with _client(app) as browser:
        assert (await browser.get(f"/login/link?token={token}")).status_code == 303
        assert (await browser.get("/")).status_code in (200, 303)
        assert (await browser.get("/")).headers.get("location") != "/login"
        async with db.transaction() as s:
            await identity.revoke_api_keys(s, demo.user_id, "demo")
        assert (await browser.get("/")).headers["location"] == "/login"
    async with _client(app) as later:  # a link issued before the revocation ends with it
        refused = await later.get(f"/login/link?token={unused}")
        assert refused.status_code == 401 and "orrery_session" not in later.cookies


async def test_a_huge_message_number_is_refused_not_a_server_error(
    client: httpx.AsyncClient, demo: Any
) -> None:
    sid = await _session(client, demo, await _csrf(client, "/"))
    for seq in ("99999999999999999999", "-1"):
        assert (await client.get(f"/s/{sid}/m/{seq}")).status_code == 422


async def test_writes_need_the_csrf_token_and_our_origin(
    client: httpx.AsyncClient, app: Any, demo: Any
) -> None:
    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    refused = await client.post(f"/s/{sid}/rename", data={"title": "forged"})
    assert refused.status_code == 403 and "CSRF" in refused.text
    cross = await client.post(
        f"/s/{sid}/rename",
        data={"title": "forged", "csrf_token": csrf},
        headers={"Origin": "https://evil.example"},
    )
    assert cross.status_code == 403
    assert "forged" not in (await client.get(f"/s/{sid}")).text
    ok = await client.post(f"/s/{sid}/rename", data={"title": "Pricing", "csrf_token": csrf})
    assert ok.status_code == 303 and 'value="Pricing"' in (await client.get(f"/s/{sid}")).text
    turn = await client.post(f"/s/{sid}/turn", json={"content": "hi"})
    assert turn.status_code == 403


async def test_another_users_session_and_entities_are_not_found(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
        project = await identity.create_project(s, eve.id, "Eve's")
        theirs = await chat.create_session(s, eve.id, project_id=project.id, title="Eve's secret")
    csrf = await _csrf(client, "/")
    page = await client.get(f"/s/{theirs.id}")
    assert page.status_code == 404 and "Eve's secret" not in page.text
    for path in ("inspector", "focus-search", "m/1"):
        assert (await client.get(f"/s/{theirs.id}/{path}")).status_code == 404
    deleted = await client.post(f"/s/{theirs.id}/delete", data={"csrf_token": csrf})
    assert deleted.status_code == 404
    sid = await _session(client, demo, csrf)
    foreign_focus = await client.post(
        f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "project", "entity_id": str(project.id)}
    )
    assert foreign_focus.status_code == 400
    async with db.transaction() as s:
        eves_task = await _entity(s, eve.id, project.id)
    focus = await client.post(
        f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "task", "entity_id": eves_task}
    )
    assert focus.status_code == 404
    async with db.transaction() as s:
        assert (await chat.get_session(s, eve.id, theirs.id)).title == "Eve's secret"


async def _entity(s: Any, user_id: Any, project_id: Any) -> str:
    from orrery.repo import graph

    made = await graph.create_entity(s, user_id, project_id, graph.EntitySpec(kind="task", name="Eve's task"))
    return str(made.id)


async def test_stored_html_is_shown_as_text(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database
) -> None:
    sid = await _session(client, demo, await _csrf(client, "/"))
    hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) **bold**"
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", hostile))
        await append_message(s, demo.user_id, sid, chat.NewMessage("assistant", hostile, agent_id="coach"))
    page = (await client.get(f"/s/{sid}")).text
    assert "<script>alert" not in page and "<img src=x" not in page and 'href="javascript' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<strong>bold</strong>" in page  # markdown still renders in replies


async def test_turn_streams_and_keeps_the_receipt_for_the_inspector(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database
) -> None:
    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    await client.post(
        f"/s/{sid}/focus", data={"csrf_token": csrf, "kind": "task", "entity_id": str(demo.focus["task"])}
    )
    before = (await client.get(f"/s/{sid}/inspector")).text
    assert "No turn has run in the web app" in before and "Linked Entities" in before
    streamed = await client.post(
        f"/s/{sid}/turn",
        json={"content": "What plan does this task belong to?"},
        headers={"X-CSRF-Token": csrf, "Idempotency-Key": "k1"},
    )
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert "event: done" in streamed.text and "Launch marketing" in streamed.text
    rendered = (await client.get(f"/s/{sid}/m/2")).text
    assert "Launch marketing" in rendered and "planner" in rendered.lower()
    inspector = (await client.get(f"/s/{sid}/inspector")).text
    assert "No turn has run" not in inspector and inspector.count("Linked Entities") >= 2
    assert inspector.count("Exact system prompt") == 2  # next turn and last turn
    assert "<strong>user</strong><pre>What plan does this task belong to?</pre>" in inspector
    replay = await client.post(
        f"/s/{sid}/turn",
        json={"content": "What plan does this task belong to?"},
        headers={"X-CSRF-Token": csrf, "Idempotency-Key": "k1"},
    )
    assert '"replayed": true' in replay.text
    async with db.transaction() as s:
        assert len(await chat.list_messages(s, demo.user_id, sid)) == 2  # the retry ran nothing twice


async def test_capture_knowledge_records_code_paths(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database
) -> None:
    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    saved = await client.post(
        f"/s/{sid}/knowledge",
        data={"csrf_token": csrf, "code": "BR-012", "code_paths": "billing/overage.py\nbilling/caps.py"},
        headers={"HX-Request": "true"},
    )
    assert saved.status_code == 200 and "billing/overage.py" in saved.text
    bad = await client.post(
        f"/s/{sid}/knowledge",
        data={"csrf_token": csrf, "code": "BR-012", "code_paths": "../etc/passwd"},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 400 and "relative file path" in bad.text and "<html" not in bad.text
    async with db.transaction() as s:
        entry = await get_entry(s, demo.user_id, demo.project_id, "BR-012")
        assert entry.data["code_paths"][-2:] == ["billing/overage.py", "billing/caps.py"]


async def test_history_pages_back_from_the_newest_messages(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    sid = await _session(client, demo, await _csrf(client, "/"))
    async with db.transaction() as s:
        for n in range(1, 36):
            await append_message(s, demo.user_id, sid, chat.NewMessage("user", f"note number {n}"))
    page = (await client.get(f"/s/{sid}")).text
    assert "note number 35" in page and "note number 6<" in page and "note number 5<" not in page
    assert f"/s/{sid}/messages?before=6" in page
    earlier = (await client.get(f"/s/{sid}/messages", params={"before": 6})).text
    assert "note number 1<" in earlier and "note number 5<" in earlier and "note number 6<" not in earlier
    assert "Show earlier" not in earlier
    assert (await client.get(f"/s/{sid}/messages", params={"before": 0})).status_code == 422


async def test_a_failed_turn_is_retried_with_the_same_key_and_answered_once(
    client: httpx.AsyncClient, app: Any, demo: Any, db: Database
) -> None:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def down(messages: list[ModelMessage], info: AgentInfo) -> Any:
        raise RuntimeError("provider is down")
        yield ""  # pragma: no cover - makes this an async generator

    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    working = app.state.orchestrator.model_factory
    app.state.orchestrator.model_factory = lambda _n, _s: FunctionModel(stream_function=down)
    headers = {"X-CSRF-Token": csrf, "Idempotency-Key": "turn-7"}
    failed = await client.post(f"/s/{sid}/turn", json={"content": "Plan my week"}, headers=headers)
    assert "event: error" in failed.text and "the model failed" in failed.text
    assert "provider is down" not in failed.text  # internals stay in the server log
    app.state.orchestrator.model_factory = working
    retried = await client.post(f"/s/{sid}/turn", json={"content": "Plan my week"}, headers=headers)
    assert "event: done" in retried.text
    async with db.transaction() as s:
        stored = await chat.list_messages(s, demo.user_id, sid)
    assert [(m.role, m.content) for m in stored][0] == ("user", "Plan my week") and len(stored) == 2


async def test_the_sessions_list_pages_with_more_chats(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    async with db.transaction() as s:
        for n in range(31):  # with the demo's own session: 32, one page of 30 and 2 more
            await chat.create_session(s, demo.user_id, title=f"chat {n:02d}")
    page = (await client.get("/", follow_redirects=True)).text
    assert "More chats" in page and "/sessions/more?offset=30" in page
    rest = (await client.get("/sessions/more", params={"offset": 30})).text
    assert rest.count("<li") == 2 and "More chats" not in rest and "No chats yet" not in rest


async def test_the_composer_works_without_javascript(client: httpx.AsyncClient, demo: Any) -> None:
    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    sent = await client.post(
        f"/s/{sid}/say", data={"csrf_token": csrf, "content": "How does overage billing work?"}
    )
    assert sent.status_code == 303
    page = (await client.get(f"/s/{sid}")).text
    assert "How does overage billing work?" in page and 'class="msg msg-assistant"' in page
    assert (await client.post(f"/s/{sid}/say", data={"content": "no token"})).status_code == 403


async def test_inspector_previews_and_compares_strategies_without_storing(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    from tests.support.conversation import TOPICS, stored, write_conversation

    sid = await _session(client, demo, await _csrf(client, "/"))
    await write_conversation(db, demo.user_id, sid)
    inspector = (await client.get(f"/s/{sid}/inspector")).text
    assert "Preview with…" in inspector and 'name="scoping"' in inspector and 'name="compare"' in inspector
    assert f'hx-get="/s/{sid}/preview"' in inspector and "does not change the chat's Scoping" in inspector
    htmx = {"HX-Request": "true"}
    compared = await client.get(
        f"/s/{sid}/preview",
        params={"scoping": "last_n", "compare": ["token_budget", "summary"]},
        headers=htmx,
    )
    assert compared.status_code == 200, compared.text
    assert "Only by some (" in compared.text and "Kept by all (" in compared.text
    assert '<td class="dropped"><span class="mark">✗</span> older than the last 10</td>' in compared.text
    assert "summary: seq 1-10" in compared.text and "nothing saved" in compared.text
    past = await client.get(f"/s/{sid}/preview", params={"scoping": "token_budget", "at": "5"}, headers=htmx)
    assert past.status_code == 200 and "Turn at seq 5" in past.text
    assert f"<pre>{TOPICS[2]}</pre>" in past.text and TOPICS[3] not in past.text
    for text in (inspector, compared.text, past.text):
        assert not re.search(r"\sstyle=", text), "CSP: classes only"
    for params in ({"scoping": "nope"}, {"scoping": "last_n", "at": "x"}, {"scoping": "last_n", "at": "4"}):
        refused = await client.get(f"/s/{sid}/preview", params=params, headers=htmx)
        assert refused.status_code == 400 and "<html" not in refused.text, params
    assert await stored(db, sid) == (16, [])
    async with db.transaction() as s:
        assert (await chat.get_session(s, demo.user_id, sid)).scoping_strategy is None
        eve = await make_user(s, "Eve")
        theirs = await chat.create_session(s, eve.id, title="Eve's")
    foreign = await client.get(f"/s/{theirs.id}/preview", params={"scoping": "last_n"}, headers=htmx)
    assert foreign.status_code == 404


async def test_the_api_docs_pages_carry_the_web_apps_security_headers(app: Any) -> None:
    """Like the web app's pages; each inline script of the page is allowed by its hash alone."""
    import base64
    import hashlib

    async with _client(app) as client:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            page = await client.get(path)
            assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
            assert page.headers["x-content-type-options"] == "nosniff"
            policy = page.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
            script_src = next(d for d in policy.split("; ") if d.startswith("script-src"))
            inline = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
            hashes = [base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in inline]
            assert script_src == " ".join(["script-src 'self'", *(f"'sha256-{h}'" for h in hashes)])
            assert "unsafe" not in script_src
        assert "http" not in (await client.get("/docs")).headers["content-security-policy"]


async def test_a_refused_provider_key_says_what_to_set_and_offers_no_retry(
    client: httpx.AsyncClient, app: Any, demo: Any
) -> None:
    """Through litellm to a fake provider answering 401: the web turn's error names the variable to
    set and says a retry cannot help (`retry: false`: the page then shows no Retry button)."""
    import json

    from orrery.agents.litellm_model import LiteLLMModel
    from tests.support.upstream import fake_provider

    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    with fake_provider() as (provider, base):
        provider.mode = "unauthorized"
        model = LiteLLMModel("openai/fake-model", api_base=base, api_key="sk-wrong")
        app.state.orchestrator.model_factory = lambda _n, _s: model
        failed = await client.post(
            f"/s/{sid}/turn", json={"content": "Plan my week"}, headers={"X-CSRF-Token": csrf}
        )
    [error] = [json.loads(b.split("data: ", 1)[1]) for b in failed.text.split("\n\n") if "event: error" in b]
    assert error == {
        "message": "the provider refused the credentials: set OPENAI_API_KEY",
        "code": "model_auth",
        "retry": False,
    }
    assert len(provider.requests) == 1  # not retried


async def test_inspector_groups_what_came_from_earlier_chats(
    client: httpx.AsyncClient, demo: Any, db: Database
) -> None:
    async with db.transaction() as s:
        earlier = await chat.create_session(
            s, demo.user_id, project_id=demo.project_id, title="Harbour notes"
        )
        for role, text in (("user", "The ferry to Kirkwall leaves at 7:15."), ("assistant", "Noted: 7:15.")):
            await append_message(s, demo.user_id, earlier.id, chat.NewMessage(role, text))
    csrf = await _csrf(client, "/")
    sid = await _session(client, demo, csrf)
    async with db.transaction() as s:
        await append_message(
            s, demo.user_id, sid, chat.NewMessage("user", "When does the Kirkwall ferry leave?")
        )
    inspector = (await client.get(f"/s/{sid}/inspector")).text
    group = inspector[inspector.index('<li class="section" data-section="earlier_chats">') :]
    group = group[: group.index("</li>")]
    assert "From earlier chats" in group and "<details open>" in group
    assert "“Harbour notes”" in group and "seq 1" in group and "recalled from an earlier chat" in group
    assert 'class="seg seg-earlier_chats' in inspector
