"""Nothing linked is dropped silently: every entity not shown is named in the receipt with its
reason, the section says how many more there are, and the Entity Relationships guidance tells the
model how to use the relations present (both dialects, through the receipt of the context route)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from orrery.db.engine import Database
from orrery.graph.linked import load_linked_entities_context
from orrery.graph.linked_format import abbreviated_within, guide_text
from orrery.knowledge.message_intent import asks_about_focus, is_link_question
from orrery.repo import graph
from orrery.tokens import counter_for
from tests.support.factories import make_entity, make_project, make_user

DEMO_DOCUMENTS = ("Pricing research summary", "Atlas 2.0 launch brief", "Team workspaces PRD", "Sales FAQ")


async def test_four_documents_each_shown_or_named_in_the_receipt(api: httpx.AsyncClient, demo: Any) -> None:
    made = await api.post(
        "/v1/sessions",
        json={"project_id": str(demo.project_id), "focus": {"kind": "task", "id": str(demo.focus["task"])}},
    )
    context = (await api.get(f"/v1/sessions/{made.json()['id']}/context")).json()
    related = next(s for s in context["receipt"]["sections"] if s["name"] == "related")
    assert related["tokens"] <= related["budget"] <= 700  # ~500 for the items, the guide apart
    text = context["system_prompt"].split("## Linked Entities", 1)[1]
    docs = text.split("### Documents", 1)[1].split("###", 1)[0]
    shown = [d for d in DEMO_DOCUMENTS if f"- {d} [" in docs]
    cut = {i["key"]: i["reason"] for i in related["excluded"]}
    assert shown and all(f"{d} (document)" in cut for d in DEMO_DOCUMENTS if d not in shown)
    assert set(cut.values()) <= {"over budget", "per-type cap of 3"}
    assert f"- … and {4 - len(shown)} more (use get_linked_entities)" in docs
    tasks = re.search(r"### Dependent Tasks \((\d) of 7 linked, 1 done\)", text)
    assert tasks and sum(k.endswith("(task)") for k in cut) == 7 - int(tasks.group(1))
    assert "### Entity Relationships" in text and "blockers while not done" in text


async def test_every_linked_entity_is_shown_or_cut_at_every_budget(db: Database) -> None:
    async with db.transaction() as s:
        u = await make_user(s)
        p = await make_project(s, u)
        plan = await make_entity(s, u, p, "plan", "Launch plan")
        for i in range(6):
            task = await make_entity(s, u, p, "task", f"Step {i} **bold**", state="done" if i < 2 else "todo")
            await graph.create_edge(s, u.id, task.id, "belongs_to_plan", plan.id)
        for i in range(4):
            doc = await make_entity(s, u, p, "document", f"Doc {i}")
            await graph.create_edge(s, u.id, plan.id, "references", doc.id)
        ctx = await load_linked_entities_context(s, u.id, plan.id, "plan", max_per_type=50)
    counter = counter_for("offline")
    assert ctx.done["tasks"] == 2 and ctx.counts["tasks"] == 6
    for budget in (500, 250, 150, 90, 20):
        fitted = abbreviated_within(ctx, budget, counter)
        text = "\n\n".join(t for _, t in fitted.blocks)
        shown = {g: n for g, n in fitted.shown.items() if n}
        assert sum(shown.values()) + len(fitted.excluded) == 10, budget
        if fitted.blocks:
            assert "### Tasks (" in text and "6 linked, 2 done)" in text
            assert "Step 0 \\*\\*bold\\*\\*" in text or "Step 0 **bold** (task)" in {
                i.key for i in fitted.excluded
            }
        else:  # not even the counts fit: everything is named, over budget
            assert {i.reason for i in fitted.excluded} == {"over budget"}
    capped = abbreviated_within(ctx, 500, counter)
    assert {i.reason for i in capped.excluded} == {"per-type cap of 3"} and len(capped.excluded) == 4


async def test_guidance_names_the_relations_present(db: Database) -> None:
    async with db.transaction() as s:
        u = await make_user(s)
        p = await make_project(s, u)
        goal = await make_entity(s, u, p, "goal", "Reach GA", goal_type="target")
        task = await make_entity(s, u, p, "task", "Ship it")
        plan = await make_entity(s, u, p, "plan", "Launch")
        await graph.create_edge(s, u.id, goal.id, "requires", task.id)
        await graph.create_edge(s, u.id, plan.id, "supports_goal", goal.id)
        ctx = await load_linked_entities_context(s, u.id, goal.id, "goal")
    guide = guide_text(ctx)
    assert "→ requires: its own work; progress = done of total" in guide
    assert "← supports_goal: plans working toward it" in guide
    assert "depends_on" not in guide and "documents" not in guide  # only relations present


def test_focus_questions_skip_the_knowledge_packet() -> None:
    for question in (
        "what is blocking this plan?",
        "What's blocking this?",
        "how far is this goal?",
        "How far along is it?",
        "What's next?",
        "What should I do next?",
        "What are the next steps?",
        "Where do we stand on this goal?",
        "What plan does this task belong to?",
    ):
        assert is_link_question(question), question
    for question in (
        "How does overage billing work?",
        "What about pricing?",
        "What is the status of pricing?",
    ):
        assert not is_link_question(question) and not asks_about_focus(question), question
