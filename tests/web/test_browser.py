"""The web app in a real browser: Debian's Chromium driven by Playwright against a real uvicorn
process on a fresh SQLite workspace (the offline model answers). One flow walks what a newcomer
does; the security checks run in the same browser; the legibility tests measure the focus graph,
the inspector and the phone layout on desktop and phone, light and dark (font size as drawn,
overlap, overflow). Set ORRERY_SCREENSHOTS=DIR to save screenshots of the main screens (the README's
and the web door page's come from here)."""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo import chat
from tests.conftest import in_thread, settings_for
from tests.support.legibility import (
    BOX,
    SMALL_TEXT,
    VIEWS,
    WHY_HEIGHTS,
    graph_is_legible,
    overlaps,
)
from tests.support.patience import HANG_GUARD_SECONDS
from tests.web.conftest import Server

SHOTS = os.environ.get("ORRERY_SCREENSHOTS")


def _shot(page: Page, name: str, *, full: bool = True) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=full)


def _session_id(page: Page) -> str:
    found = re.search(r"/s/([0-9a-f-]{36})", page.url)
    assert found, page.url
    return found.group(1)


def test_a_newcomer_chats_in_focus_and_inspects_the_context(page: Page, server: Server) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    _shot(page, "login", full=False)
    page.get_by_label("API key").fill(server.api_key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".topbar")).to_contain_text("Maya Chen")

    page.get_by_label("Title (optional)").fill("Where does pricing fit?")
    page.get_by_role("button", name="New chat").click()
    expect(page.locator(".session-list li.current")).to_contain_text("Where does pricing fit?")
    sid = _session_id(page)

    page.get_by_text("Change focus").click()
    page.get_by_label("Search by name").fill("finalize pricing")
    focus_button = page.get_by_role("button", name="Focus task Finalize pricing page")
    expect(focus_button).to_be_visible()
    _shot(page, "focus-picker", full=False)
    focus_button.click()
    expect(page.locator(".current-focus")).to_contain_text("Finalize pricing page")
    expect(page.locator(".current-focus .state")).to_have_text("in_progress")

    page.get_by_label("Message", exact=True).fill("What plan does this task belong to?")
    page.keyboard.press("Enter")
    answer = page.locator(".msg-assistant[data-seq='2']")  # the server's rendering replaces the stream
    expect(answer).to_contain_text("Launch marketing")
    expect(answer.locator(".agent")).to_have_text("planner")

    page.get_by_label("Message", exact=True).fill("What is this task blocked by?")
    page.get_by_role("button", name="Send").click()
    card = page.locator(".msg-assistant[data-seq='4'] details.tool")
    expect(card).to_contain_text("get_linked_entities")
    card.locator("summary").click()
    expect(card.locator("pre").first).to_contain_text("entity_id")
    expect(card).to_contain_text("Legal review of pricing terms")

    expect(page.locator("#inspector")).to_have_attribute("open", "")  # open from the start
    linked = page.locator(".turn[open] .section", has_text="Linked Entities")
    expect(linked).to_contain_text(re.compile(r"[1-9]\d* / \d+ tokens"))
    expect(page.locator(".linked")).to_contain_text("Launch marketing")
    page.locator(".turn", has_text="Last turn").locator("summary").first.click()
    expect(
        page.locator(".turn", has_text="Last turn").locator(".section", has_text="Linked Entities")
    ).to_be_visible()
    _shot(page, "chat-and-inspector", full=False)

    page.get_by_label("Agent", exact=True).select_option("coach")
    page.get_by_label("Scoping", exact=True).select_option("relevance")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_label("Agent", exact=True)).to_have_value("coach")
    expect(page.get_by_label("Scoping", exact=True)).to_have_value("relevance")
    expect(page.locator(".handoff").last).to_contain_text("coach")
    expect(page.locator("#inspector")).to_have_attribute("open", "")  # open from the start
    expect(page.locator(".turn[open] .totals")).to_contain_text("relevance")

    page.get_by_label("Entry code").fill("BR-012")
    page.get_by_label("Code paths (one per line)").fill("backend/billing/overage.py")
    page.get_by_role("button", name="Save to knowledge base").click()
    expect(page.locator("#capture-result")).to_contain_text("backend/billing/overage.py")

    # refocus from a link
    page.locator(".linked").get_by_role("button", name="Launch marketing", exact=True).click()
    expect(page.locator(".current-focus")).to_contain_text("Launch marketing")
    expect(page.locator(".current-focus .kind")).to_have_text("plan")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.get_by_label("Message", exact=True)).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    _shot(page, "phone", full=False)
    page.set_viewport_size({"width": 1360, "height": 900})

    refused = page.request.post(f"/s/{sid}/rename", form={"title": "forged"})  # the cookie, no CSRF token
    assert refused.status == 403
    foreign = page.goto(f"/s/{server.foreign_session}")
    assert foreign is not None and foreign.status == 404
    expect(page.locator("h1")).to_have_text("Not found.")
    expect(page.locator("body")).not_to_contain_text("Eve's secret")

    page.goto(f"/s/{sid}")
    expect(page.locator("#title")).to_have_value("Where does pricing fit?")
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto(f"/s/{sid}")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fs%2F"))


CSP_PROBE = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""


SCROLL_UP_WHEN_SENT = """() => {
  const send = window.fetch;
  window.fetch = (url, options) => {
    if (String(url).endsWith("/turn")) document.getElementById("messages").scrollTop = 0;
    return send(url, options);
  };
}"""


def _no_csp_violations(page: Page) -> None:
    assert page.evaluate("window.__csp") == [], "CSP violations on " + page.url


async def _store_exchange(db_url: str, user_id: str, sid: str, question: str, reply: str) -> None:
    """A finished exchange written straight to the server's database (as a turn would store it)."""
    db = Database.from_settings(settings_for(db_url))
    try:
        async with db.transaction() as s:
            for role, text in (("user", question), ("assistant", reply)):
                agent = "planner" if role == "assistant" else None
                await append_message(s, uuid.UUID(user_id), sid, chat.NewMessage(role, text, agent))
    finally:
        await db.dispose()


def test_code_blocks_have_a_copy_button(page: Page, server: Server) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    headers = {"Authorization": f"Bearer {server.api_key}"}
    me = httpx.get(f"{server.url}/v1/me", headers=headers, timeout=HANG_GUARD_SECONDS).json()
    made = httpx.post(f"{server.url}/v1/sessions", json={}, headers=headers, timeout=HANG_GUARD_SECONDS)
    sid = made.json()["id"]
    reply = "Run this:\n\n```python\nprint('ship it')\n```\n"
    in_thread(asyncio.run, _store_exchange(server.db_url, me["id"], sid, "How do I ship?", reply))
    page.goto("/login")
    page.get_by_label("API key").fill(server.api_key)
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"/s/{sid}")
    copy = page.locator(".msg-assistant pre").get_by_role("button", name="Copy code")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "print('ship it')\n"


def _send(page: Page, text: str, seq: int) -> None:
    page.get_by_label("Message", exact=True).fill(text)
    page.keyboard.press("Enter")
    expect(page.locator(f".msg-assistant[data-seq='{seq}']")).to_be_visible()


def test_inspector_graph_edit_search_and_phone(page: Page, server: Server) -> None:
    page.context.add_init_script(CSP_PROBE)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/login")
    page.get_by_label("API key").fill(server.api_key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Title (optional)").fill("Inspector tour")
    page.get_by_role("button", name="New chat").click()
    sid = _session_id(page)
    page.get_by_role("button", name="Sign out").click()
    page.goto(f"/s/{sid}")  # return-to: signing in leads back to the page asked for
    expect(page.locator("main")).to_contain_text("orrery web link")
    page.get_by_label("API key").fill(server.api_key)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(f"/s/{sid}$"))

    page.get_by_text("Change focus").click()
    page.get_by_label("Search by name").fill("finalize pricing")
    page.get_by_role("button", name="Focus task Finalize pricing page").click()
    _send(page, "What is this task blocked by?", 2)

    # the budget bar's numbers are the receipt's (the API's view of the next turn)
    receipt = page.request.get(
        f"/v1/sessions/{sid}/context", headers={"Authorization": f"Bearer {server.api_key}"}
    ).json()["receipt"]
    bar = page.locator(".turn[open] .budget").first
    expect(bar).to_have_attribute("data-total-tokens", str(receipt["total_tokens"]))
    drawn = bar.locator("rect.seg[data-section]").evaluate_all(
        "els => els.map(e => [e.dataset.section, +e.dataset.tokens])"
    )
    assert drawn == [[s["name"], s["tokens"]] for s in receipt["sections"]]
    related = page.locator(".turn[open] .section[data-section='related']")
    expect(related.locator("table.excluded")).to_contain_text("Legal review of pricing terms")
    expect(page.locator(".turn[open] .section[data-section='focus'] td.item")).to_contain_text(
        "task: Finalize pricing page"
    )
    _shot(page, "inspector", full=False)
    _no_csp_violations(page)

    # sidebar search over titles and message text
    page.get_by_label("Search chats").fill("blocked")
    expect(page.locator(".search-results")).to_contain_text("Inspector tour")

    # edit-and-resend the last user message: the old exchange leaves the page
    page.locator(".msg-user[data-seq='1']").get_by_role("button", name=re.compile("Edit")).click()
    page.get_by_label("Edited message").fill("What plan does this task belong to?")
    page.get_by_role("button", name="Send edit").click()
    expect(page.locator(".msg-assistant[data-seq='4']")).to_contain_text("Launch marketing")
    expect(page.locator("#messages")).not_to_contain_text("blocked by?")
    page.reload()
    expect(page.locator(".msg")).to_have_count(2)

    # autoscroll follows a reply; scrolled up, a "new reply" pill appears instead
    _send(page, "Line one\n" + "\n".join(f"note {i}" for i in range(40)), 6)
    expect(page.locator(".msg-assistant[data-seq='6']")).to_be_in_viewport()
    page.evaluate(SCROLL_UP_WHEN_SENT)  # the reader scrolls up while the reply streams
    _send(page, "And the next step?", 8)
    pill = page.get_by_role("button", name="New reply ↓")
    expect(pill).to_be_visible()
    pill.click()
    expect(pill).to_be_hidden()
    expect(page.locator(".msg-assistant[data-seq='8']")).to_be_in_viewport()

    # the focus graph: a keyboard user tabs to a node and refocuses with Enter
    node = page.locator(".focus-graph .node[data-id]").first
    name = (node.get_attribute("aria-label") or "").split(" (")[0].split(" ", 2)[2]
    node.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".current-focus")).to_contain_text(name)
    _no_csp_violations(page)

    # phone: the composer never covers the last message; the inspector is a tab
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    _send(page, "Where are we?", 10)
    last = page.locator(".msg-assistant[data-seq='10']").bounding_box()
    composer = page.locator("#composer").bounding_box()
    assert last and composer and last["y"] + last["height"] <= composer["y"] + 1
    page.get_by_role("button", name="Context").click()
    expect(page.locator(".inspector .budget").first).to_be_visible()
    expect(page.locator("#composer")).to_be_hidden()
    _shot(page, "phone-inspector", full=False)
    page.get_by_role("button", name="Chat").click()
    expect(page.locator("#composer")).to_be_visible()
    _no_csp_violations(page)
    page.set_viewport_size({"width": 1360, "height": 900})


def test_the_api_docs_render_under_their_security_policy(page: Page, server: Server) -> None:
    """`/docs` and `/redoc` carry a CSP and `X-Frame-Options` (like the web app's pages), and still
    render from the local assets. The one thing refused is ReDoc's logo from its CDN (it always asks
    for it): nothing is loaded from outside."""
    tab = page.context.new_page()  # its own console: the refused logo is logged as an error there
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.add_init_script(CSP_PROBE)
    try:
        for path, title in (("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")):
            response = tab.goto(path)
            assert response is not None and response.headers["x-frame-options"] == "DENY"
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
            expect(tab.locator(title).first).to_contain_text("Orrery")
            expect(tab.get_by_text("/v1/sessions").first).to_be_attached()
            logo = "img-src https://cdn.redoc.ly/redoc/logo-mini.svg"
            assert [v for v in tab.evaluate("window.__csp") if v != logo] == [], path
        assert [e for e in errors if "cdn.redoc.ly" not in e] == []
    finally:
        tab.close()


# --- legibility (issue 43): desktop and phone, light and dark, measured from the rendered page


def _chat_in_focus(page: Page, server: Server) -> str:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/login")
    page.get_by_label("API key").fill(server.api_key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Title (optional)").fill("Legible")
    page.get_by_role("button", name="New chat").click()
    page.get_by_text("Change focus").click()
    page.get_by_label("Search by name").fill("launch marketing")
    page.get_by_role("button", name="Focus plan Launch marketing").click()
    expect(page.locator(".current-focus")).to_contain_text("Launch marketing")
    page.get_by_label("Message", exact=True).fill("What is in this plan?")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant[data-seq='2']")).to_be_visible()
    found = re.search(r"/s/([0-9a-f-]{36})", page.url)
    assert found
    return found.group(1)


def test_graph_and_inspector_are_legible_on_desktop_and_phone(page: Page, server: Server) -> None:
    sid = _chat_in_focus(page, server)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for view, (width, height) in VIEWS.items():
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"/s/{sid}")
            if view == "phone":
                page.get_by_role("button", name="Context").click()
            graph = page.locator(".focus-graph")
            expect(graph).to_be_visible()
            more = graph.locator(".graph-more > summary")
            expect(more).to_have_text(re.compile(r"^\d+ more$"))
            more.click()
            expect(graph.locator(".graph-more svg .node").first).to_be_visible()
            graph_is_legible(page, f"{view}/{scheme}")
            graph.scroll_into_view_if_needed()
            if (view, scheme) in (("desktop", "light"), ("phone", "dark")):  # the two the web page shows
                _shot(page, f"graph-{view}-{scheme}", full=False)
            assert page.evaluate(SMALL_TEXT, "#inspector") == [], (
                f"{view}/{scheme}: inspector text under 12px"
            )
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1360, "height": 900})


def test_why_stays_one_line_until_asked(page: Page, server: Server) -> None:
    sid = _chat_in_focus(page, server)
    page.goto(f"/s/{sid}")
    # the knowledge packet follows the turn, without a reload
    packet = page.locator("#inspector section.packet")
    page.get_by_label("Message", exact=True).fill("What does BR-012 say?")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant[data-seq='4']")).to_contain_text("BR-012")
    expect(packet).to_contain_text("BR-012")
    expect(packet).not_to_contain_text("No knowledge loaded")
    page.locator("#inspector .section[data-section='related'] summary").first.click()
    lines = page.evaluate(WHY_HEIGHTS)
    assert lines and all(height < 1.3 for height, _ in lines), lines
    cut = page.evaluate(
        "() => [...document.querySelectorAll('#inspector .why-text')]"
        ".findIndex(e => e.checkVisibility() && e.scrollWidth > e.clientWidth + 1)"
    )
    long = page.locator("#inspector .why-text").nth(cut)
    if cut >= 0:  # a reason cut on screen opens in full on focus (a tap on a phone)
        long.focus()
        assert (
            long.evaluate(
                "e => e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)"
            )
            > 1.3
        )


def test_phone_layout_keeps_to_the_screen(page: Page, server: Server) -> None:
    sid = _chat_in_focus(page, server)
    page.set_viewport_size({"width": 390, "height": 844})
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto(f"/s/{sid}")
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), "sideways scroll"
        tops = page.locator(".topbar > *:visible").evaluate_all(
            "els => els.map(e => e.getBoundingClientRect().top)"
        )
        assert max(tops) - min(tops) < 12, f"the top bar wraps: {tops}"
        label = page.locator("label[for='strategy']").evaluate(BOX)
        select = page.get_by_label("Scoping", exact=True).evaluate(BOX)
        assert abs((label[1] + label[3]) / 2 - (select[1] + select[3]) / 2) < 8, (
            "Scoping is split from its select"
        )
        page.get_by_text("Change focus").click()
        page.get_by_label("Search by name").fill("e")
        buttons = page.locator("#focus-results").get_by_role("button", name=re.compile("^Focus "))
        expect(buttons.nth(5)).to_be_visible()
        last = buttons.last
        last.focus()  # a keyboard user reaching the last result
        if scheme == "light":
            _shot(page, "phone-picker", full=False)
        row = last.evaluate(BOX)
        composer = page.locator("#composer").evaluate(BOX)
        assert not overlaps(row, composer), f"the composer covers the picker's last row: {row} {composer}"
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), "sideways scroll"
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1360, "height": 900})
