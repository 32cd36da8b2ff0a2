"""Focus answers through the doors a user found them broken: HTTP chat and the web app with the
offline model, plan / goal / task in focus. "What is blocking this plan?", "How far is this goal?",
"What's next?" are answered from the linked entities, state-aware, and load no knowledge packet."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from orrery.agents.offline_answers import answer_links, focus_question, parse_links
from orrery.app.http import create_app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.repo import chat
from tests.support.web import sign_in


async def _ask(api: httpx.AsyncClient, demo: Any, kind: str, text: str) -> tuple[str, str]:
    made = await api.post(
        "/v1/sessions",
        json={"project_id": str(demo.project_id), "focus": {"kind": kind, "id": str(demo.focus[kind])}},
    )
    sid = str(made.json()["id"])
    answered = await api.post(
        f"/v1/sessions/{sid}/messages", json={"content": text}, headers={"Accept": "application/json"}
    )
    assert answered.status_code == 200, answered.text
    return str(answered.json()["reply"]), sid


async def _no_packet(api: httpx.AsyncClient, db: Database, demo: Any, sid: str) -> None:
    """No knowledge section now, none stored for later turns (the next message still decides)."""
    context = (await api.get(f"/v1/sessions/{sid}/context")).json()
    assert "## Knowledge Context" not in context["system_prompt"]
    assert "knowledge" not in {s["name"] for s in context["receipt"]["sections"]}
    async with db.transaction() as s:
        record = await chat.get_session(s, demo.user_id, sid)
        assert not record.knowledge_packet and record.knowledge_focus is None


async def test_what_is_blocking_this_plan(api: httpx.AsyncClient, db: Database, demo: Any) -> None:
    reply, sid = await _ask(api, demo, "plan", "what is blocking this plan?")
    assert "Launch marketing" in reply and "wait on unfinished work" in reply
    assert "Legal review of pricing terms" in reply  # waits on the copy, still in progress
    assert "Decide usage-based price points" not in reply  # done: never a blocker
    assert "Build usage calculator widget" not in reply  # its only dependency is done
    await _no_packet(api, db, demo, sid)


async def test_a_done_dependency_is_not_counted_as_a_blocker(api: httpx.AsyncClient, demo: Any) -> None:
    reply, _ = await _ask(api, demo, "task", "What's blocking this?")
    listed = reply.split("Already done")[0]
    assert "blocked by 3 items" in listed and "Legal review of pricing terms" in listed
    assert "Decide usage-based price points" not in listed
    assert "Already done, so not blockers: **Decide usage-based price points**" in reply


@pytest.mark.parametrize(
    "question", ["how far is this goal?", "How far along is it?", "What's the progress?"]
)
async def test_how_far_is_this_goal(api: httpx.AsyncClient, db: Database, demo: Any, question: str) -> None:
    reply, sid = await _ask(api, demo, "goal", question)
    # requires 2 tasks, supported by 1 task, achieved by 1 milestone; none done; plans are context
    assert "0 of 4 of its tasks and milestones are done" in reply and "0%" in reply
    assert "Ship shared billing" in reply and "Launch marketing" not in reply
    await _no_packet(api, db, demo, sid)


async def test_plan_progress_counts_done_of_all_its_tasks(api: httpx.AsyncClient, demo: Any) -> None:
    reply, _ = await _ask(api, demo, "plan", "How far along is this plan?")
    # 10 tasks (3 shown in the prompt; the tool lists all), 1 done and 1 cancelled
    assert "2 of 10 of its tasks and milestones are done" in reply and "20%" in reply


async def test_whats_next_is_the_first_open_item_that_waits_on_nothing(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    reply, sid = await _ask(api, demo, "plan", "What's next?")
    first = re.search(r"Next for the plan \*\*Launch marketing\*\*: \*\*(.+?)\*\*", reply)
    assert first and first.group(1) in ("Build usage calculator widget", "Write pricing page copy")
    assert "Legal review of pricing terms" not in reply  # waits on the copy
    await _no_packet(api, db, demo, sid)
    task_next, _ = await _ask(api, demo, "task", "what should I do next?")
    assert "Decide usage-based price points" not in task_next and "Legal review" not in task_next


@pytest.fixture
async def web(settings: Settings, demo: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The web app, signed in as the demo user."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://orrery") as client:
            await sign_in(client, demo.api_key)
            yield client


async def test_web_app_plan_focus_answers_and_lists_what_was_cut(web: httpx.AsyncClient, demo: Any) -> None:
    page = await web.get("/", follow_redirects=True)
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text)
    assert csrf
    token = csrf.group(1)
    made = await web.post("/sessions", data={"csrf_token": token, "project_id": str(demo.project_id)})
    sid = str(made.headers["location"]).removeprefix("/s/")
    await web.post(
        f"/s/{sid}/focus", data={"csrf_token": token, "kind": "plan", "entity_id": str(demo.focus["plan"])}
    )
    for n, question in enumerate(("what is blocking this plan?", "how far along is this plan?")):
        streamed = await web.post(
            f"/s/{sid}/turn",
            json={"content": question},
            headers={"X-CSRF-Token": token, "Idempotency-Key": f"k{n}"},
        )
        assert "event: done" in streamed.text
    assert "Legal review of pricing terms" in streamed.text or "20%" in streamed.text
    inspector = (await web.get(f"/s/{sid}/inspector")).text
    assert "Knowledge Context" not in inspector  # no packet loaded, none persisted
    assert "Entity Relationships" in inspector or "relationships" in inspector
    # the plan has 10 tasks and the prompt shows 3: the other 7 are named in the receipt
    assert "left out" in inspector and "per-type cap of 3" in inspector
    assert "Write launch email (task)" in inspector


FULL = """## Linked Entities for: Launch [00000000-0000-0000-0000-000000000001]

### Tasks (4 total)

#### Done one [00000000-0000-0000-0000-000000000002]

- **State:** done
- **Relationship:** belongs_to_plan (incoming)

#### Stuck one [00000000-0000-0000-0000-000000000003]

- **State:** blocked
- **Relationship:** belongs_to_plan (incoming)

#### Waiting one [00000000-0000-0000-0000-000000000004]

- **State:** todo
- **Relationship:** belongs_to_plan (incoming)
- **Waits on:** 2 unfinished dependencies

#### Ready one [00000000-0000-0000-0000-000000000005]

- **State:** todo
- **Relationship:** belongs_to_plan (incoming)

### Documents (1 total)

#### Spec [00000000-0000-0000-0000-000000000006]

- **State:** active
- **Relationship:** references (outgoing)
"""


def test_answers_follow_the_relation_rules_on_the_tool_output() -> None:
    links = parse_links(FULL)
    assert [x.open_dependencies for x in links] == [0, 0, 2, 0, 0]
    subject = "the plan **Launch**"
    blockers = answer_links("What's blocking this plan?", subject, links)
    assert "blocked by 1 item" in blockers and "**Stuck one**" in blockers
    assert "**Waiting one** (todo; waits on 2 unfinished)" in blockers and "Done one" not in blockers
    progress = answer_links("How far along is it?", subject, links, "active")
    assert "25% along: 1 of 4 of its tasks and milestones are done. It is active." in progress
    assert "Spec" not in progress  # documents are references, not work
    assert "Next for the plan **Launch**: **Ready one**" in answer_links("What's next?", subject, links)
    assert focus_question("How is this plan going?") == "progress"
    assert focus_question("What does this task block?") is None
