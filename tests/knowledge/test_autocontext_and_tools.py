"""Auto-context's four end-to-end cases, reuse and focus changes; the knowledge tools."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from sqlalchemy import event

from orrery.config import Settings
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import ChatSession
from orrery.deps import TurnDeps
from orrery.knowledge.entries import entry_revisions
from orrery.memory.messages import append_message
from orrery.repo import chat
from orrery.tokens import counter_for
from orrery.tools.registry import agent_tools
from tests.support.factories import make_entity, make_project, make_user
from tests.support.models import calls


async def _turn(
    db: Database, settings: Settings, user_id: Any, project_id: Any, text: str, **focus: Any
) -> Any:
    async with db.transaction() as s:
        c = await chat.create_session(s, user_id, project_id=project_id, **focus)
        await append_message(s, user_id, c.id, chat.NewMessage("user", text))
        wc = await assemble_working_context(
            s, agent="coach", base_prompt="Coach.", session_id=c.id, user_id=user_id, settings=settings
        )
    return c.id, wc


async def test_domain_task_loads_high_confidence_silently_with_a_short_receipt(
    db: Database, settings: Settings, demo: Any
) -> None:
    _, wc = await _turn(
        db,
        settings,
        demo.user_id,
        demo.project_id,
        "Add overage billing to the usage calculator on the pricing page",
    )
    k = wc.receipt.knowledge
    assert k is not None and k["status"] == "loaded" and k["confidence"] == "high"
    assert k["receipt"].startswith("Loaded ") and "BR-012" in k["receipt"]
    assert counter_for("offline").count(k["receipt"]) < 200
    assert "## Knowledge Context\n## Context Loaded\n**Confidence:** High" in wc.system_prompt
    assert "Open your reply with this one-line receipt" in wc.system_prompt


async def test_non_domain_task_skips(db: Database, settings: Settings, demo: Any) -> None:
    _, wc = await _turn(
        db, settings, demo.user_id, demo.project_id, "How do I center a div with CSS flexbox?"
    )
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["status"] == "skipped"
    assert "Knowledge Context" not in wc.system_prompt


async def test_ambiguous_task_is_medium_and_asks(db: Database, settings: Settings, demo: Any) -> None:
    _, wc = await _turn(db, settings, demo.user_id, demo.project_id, "How do we count weekly active teams?")
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["confidence"] == "medium"
    assert "ask whether more context is needed" in wc.system_prompt


async def test_empty_kb_offers_capture_for_domain_work(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        await make_entity(s, user, project, "task", "Renegotiate supplier contracts")
    _, wc = await _turn(db, settings, user.id, project.id, "Where are we with the supplier contracts?")
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["confidence"] == "none"
    assert "No KB context found for this task." in wc.system_prompt
    assert "offer to capture knowledge" in wc.system_prompt
    _, wc = await _turn(db, settings, user.id, project.id, "Any tips for better sleep?")
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["status"] == "skipped"


async def test_packet_is_reused_until_the_focus_changes(db: Database, settings: Settings, demo: Any) -> None:
    sid, first = await _turn(db, settings, demo.user_id, demo.project_id, "Explain the overage billing rule")
    statements: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "And what about css flexbox?"))
        again = await assemble_working_context(
            s, agent="coach", base_prompt="Coach.", session_id=sid, user_id=demo.user_id, settings=settings
        )
    assert again.receipt.knowledge is not None and again.receipt.knowledge["status"] == "reused"
    assert "## Context Loaded" in again.system_prompt
    assert not any("kb_entries" in q for q in statements)  # no KB query on a later turn
    async with db.transaction() as s:
        record = await s.get(ChatSession, sid)
        assert record is not None
        record.focus_kind, record.focus_id = "task", demo.focus["task"]
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "What blocks this task?"))
        moved = await assemble_working_context(
            s, agent="coach", base_prompt="Coach.", session_id=sid, user_id=demo.user_id, settings=settings
        )
    assert moved.receipt.knowledge is not None and moved.receipt.knowledge["status"] in ("loaded", "skipped")
    assert first.receipt.knowledge is not None and first.receipt.knowledge["status"] == "loaded"


async def test_knowledge_tools_read_and_write_with_provenance(
    db: Database, settings: Settings, demo: Any
) -> None:
    async with db.transaction() as s:
        session_ = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
    deps = TurnDeps(
        db=db, user_id=demo.user_id, settings=settings, project_id=demo.project_id, session_id=session_.id
    )

    async def run(tool: str, args: dict[str, Any]) -> str:
        agent = Agent(calls(tool, args), deps_type=TurnDeps, tools=agent_tools())
        return str((await agent.run("go", deps=deps)).output)

    packet = await run("load_context_for_task", {"task_description": "overage billing on the pricing page"})
    assert "## Context Loaded" in packet and "BR-012" in packet
    assert "GT-031" in await run("search_knowledge", {"query": "overage"})
    entry = await run("get_entry", {"code": "BR-012"})
    assert "## BR-012: Usage overage billing" in entry and "uses_term (outgoing)" in entry
    updated = await run("update_entry", {"code": "BR-012", "add_code_paths": ["backend/billing/invoice.py"]})
    assert "backend/billing/invoice.py" in updated
    assert "not found" in await run("get_entry", {"code": "ZZ-404"})
    assert "relative file path" in await run("update_entry", {"code": "BR-012", "add_code_paths": ["/etc/x"]})
    assert "at most 1000 characters" in await run(
        "update_entry", {"code": "BR-012", "correction": "x" * 1001}
    )
    async with db.sessions() as s:
        revisions = await entry_revisions(s, demo.user_id, demo.project_id, "BR-012")
    assert [r.session_id for r in revisions] == [session_.id]


async def test_a_question_about_the_focus_links_skips_without_deciding(
    db: Database, settings: Settings, demo: Any
) -> None:
    focus = {"focus_kind": "task", "focus_id": demo.focus["task"]}
    sid, wc = await _turn(
        db, settings, demo.user_id, demo.project_id, "What plan does this task belong to?", **focus
    )
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["status"] == "skipped"
    assert "Knowledge Context" not in wc.system_prompt
    async with db.transaction() as s:
        await append_message(s, demo.user_id, sid, chat.NewMessage("user", "How does overage billing work?"))
        later = await assemble_working_context(
            s, agent="coach", session_id=sid, user_id=demo.user_id, settings=settings
        )
    assert later.receipt.knowledge is not None and later.receipt.knowledge["status"] == "loaded"
    assert "BR-012" in later.system_prompt


async def test_empty_kb_knowledge_question_offers_capture(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
    _, wc = await _turn(db, settings, user.id, project.id, "How does overage billing work?")
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["confidence"] == "none"
    assert "offer to capture knowledge" in wc.system_prompt
    _, wc = await _turn(db, settings, user.id, project.id, "How do I get better sleep?")
    assert wc.receipt.knowledge is not None and wc.receipt.knowledge["status"] == "skipped"
