"""The "Earlier chats" timeline in a new chat's prompt: dated lines newest first, only chats recall
may read, folded per period under a tight budget, in the receipt, one statement (both databases)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from orrery.config import Settings
from orrery.context.timeline import TITLE, fold, read_entries
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import Message, User
from orrery.memory.digests import digest_chat
from orrery.memory.messages import append_message
from orrery.repo.chat import NewMessage, create_session
from orrery.repo.identity import add_member, create_project, create_user
from orrery.repo.sessions import delete_session
from tests.support.db_events import count_statements

DAY = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
ARC = [
    ("Kickoff", "We start the Heron booking app; the first sprint ends April 1."),
    ("Schema", "Add a vouchers table with 12 columns in Postgres."),
    ("Launch", "Shipped Heron to 300 beta testers in Lisbon."),
]


async def _person(s: Any, name: str) -> uuid.UUID:
    return (await create_user(s, f"{name}-{uuid.uuid4().hex[:6]}@example.org", name)).id


async def _chat(
    s: Any, user_id: uuid.UUID, project_id: uuid.UUID | None, title: str, text: str, day: int
) -> Any:
    chat = await create_session(s, user_id, project_id=project_id, title=title)
    chat.created_at = DAY + timedelta(days=day)
    for i, (role, line) in enumerate([("user", text), ("assistant", "Noted.")]):
        at = DAY + timedelta(days=day, minutes=i)
        await append_message(s, user_id, chat.id, NewMessage(role, line, created_at=at))
    return chat


async def _digest_all(db: Database, *chats: Any) -> None:
    for chat in chats:
        await digest_chat(db, chat.id, now=DAY + timedelta(days=400))


async def _ask(db: Database, settings: Settings, user_id: uuid.UUID, project_id: uuid.UUID | None) -> Any:
    async with db.transaction() as s:
        chat = await create_session(s, user_id, project_id=project_id)
        at = DAY + timedelta(days=200)
        await append_message(s, user_id, chat.id, NewMessage("user", "How did my project go?", created_at=at))
        wc = await assemble_working_context(
            s, agent="coach", session_id=chat.id, user_id=user_id, settings=settings
        )
        await s.rollback()
    return wc


def _timeline(wc: Any) -> Any:
    return next((r for r in wc.receipt.sections if r.name == "timeline"), None)


def _lines(prompt: str) -> list[str]:
    head = f"## {TITLE}\n"
    if head not in prompt:
        return []
    return prompt.split(head, 1)[1].split("\n\n", 1)[0].splitlines()


async def test_a_new_chat_sees_its_earlier_chats_dated_newest_first_with_their_digests(
    db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        project = await create_project(s, ana, "Heron")
        chats = [
            await _chat(s, ana, project.id, title, text, day * 7) for day, (title, text) in enumerate(ARC)
        ]
    await _digest_all(db, *chats)
    wc = await _ask(db, settings, ana, project.id)
    lines = _lines(wc.system_prompt)
    assert [line.split(" · ")[0] for line in lines] == ["- 2025-03-17", "- 2025-03-10", "- 2025-03-03"]
    assert lines[0].startswith('- 2025-03-17 · "Launch": "') and "300" in lines[0] and "Lisbon" in lines[0]
    assert "vouchers" in lines[1] and "12" in lines[1] and "Heron" in lines[2]
    section = _timeline(wc)
    assert section.title == TITLE and 0 < section.tokens <= section.budget == settings.budget_timeline
    assert [i.key for i in section.included] == [
        "2025-03-17 Launch",
        "2025-03-10 Schema",
        "2025-03-03 Kickoff",
    ]
    assert wc.system_prompt.index("## Earlier chats") < wc.system_prompt.index(
        "## Excerpts from earlier chats"
    )
    assert wc.receipt.as_dict()["sections"][-3]["name"] == "timeline"


async def test_only_chats_recall_may_read_are_shown(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana, ben = await _person(s, "ana"), await _person(s, "ben")
        project = await create_project(s, ana, "Heron")
        other = await create_project(s, ana, "Garden")
        await add_member(s, ana, project.id, ben, "editor")
        kept = await _chat(s, ana, project.id, "Kept", "Heron vouchers", 1)
        quiet = await _chat(s, ana, project.id, "Quiet", "secret plan", 2)
        gone = await _chat(s, ana, project.id, "Gone", "deleted plan", 3)
        elsewhere = await _chat(s, ana, other.id, "Elsewhere", "tomatoes", 4)
        bens = await _chat(s, ben, project.id, "Bens", "ben plan", 5)
    await _digest_all(db, kept, quiet, gone, elsewhere, bens)
    async with db.transaction() as s:
        from orrery.repo.sessions import set_remember

        await set_remember(s, ana, quiet.id, False)
        await delete_session(s, ana, gone.id)
    titles = [
        line.split('"')[1] for line in _lines((await _ask(db, settings, ana, project.id)).system_prompt)
    ]
    assert titles == ["Kept"]
    async with db.transaction() as s:
        await s.execute(update(User).where(User.id == ana).values(recall_other_projects=True))
    titles = [
        line.split('"')[1] for line in _lines((await _ask(db, settings, ana, project.id)).system_prompt)
    ]
    assert titles == ["Elsewhere", "Kept"]
    async with db.transaction() as s:
        await s.execute(update(User).where(User.id == ana).values(recall_across_chats=False))
    wc = await _ask(db, settings, ana, project.id)
    assert _lines(wc.system_prompt) == [] and _timeline(wc) is None


async def test_a_digest_older_than_an_edit_of_its_chat_is_not_shown_until_rebuilt(
    db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        chat = await _chat(s, ana, None, "Plan", "Budget is 4,000 euros for Heron.", 1)
    await _digest_all(db, chat)
    async with db.transaction() as s:  # any process: an edit bumps the chat's history epoch
        await s.execute(
            update(Message).where(Message.session_id == chat.id, Message.seq == 1).values(superseded_at=DAY)
        )
    [line] = _lines((await _ask(db, settings, ana, None)).system_prompt)
    assert line == '- 2025-03-04 · "Plan"' and "4,000" not in line
    await _digest_all(db, chat)
    [line] = _lines((await _ask(db, settings, ana, None)).system_prompt)
    assert "4,000" not in line  # rebuilt from what is left


async def test_older_chats_fold_into_one_line_per_period_under_a_tight_budget(
    db: Database, settings: Settings
) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        chats = [
            await _chat(
                s, ana, None, f"Chat {i}", f"Step {i}: tuned the zircon{i} pipeline to {i * 100} rps", i * 12
            )
            for i in range(12)
        ]
    await _digest_all(db, *chats)
    tight = settings.model_copy(update={"budget_timeline": 160})
    wc = await _ask(db, tight, ana, None)
    lines = _lines(wc.system_prompt)
    section = _timeline(wc)
    assert section.tokens <= section.budget == 160
    assert lines[0].startswith('- 2025-07-13 · "Chat 11"')  # the newest whole
    folded = [line for line in lines if " chats, oldest first: " in line]
    assert folded and folded[0].startswith("- 2025-")  # months: the folded chats span months
    reasons = {i.key: i.reason for i in section.excluded}
    assert reasons["2025-03-03 Chat 0"].startswith(("folded into 2025-03", "over budget"))
    assert len(section.included) == len(lines)
    shown = sum(1 for line in lines if " · " in line) + sum(
        int(line.split(", ")[1].split()[0]) for line in folded
    )
    assert shown + sum(1 for i in section.excluded if i.reason == "over budget") == 12


def test_folding_groups_by_week_when_the_chats_are_close() -> None:
    from orrery.context.timeline import Entry

    entries = [Entry(uuid.uuid4(), (DAY + timedelta(days=d)).date(), f"c{d}", "x y") for d in (9, 8, 2, 1)]
    lines = [f.line for f in fold(entries)]
    assert lines == [
        '- week of 2025-03-10, 2 chats, oldest first: "c8" (x y); "c9" (x y)',
        '- week of 2025-03-03, 2 chats, oldest first: "c1" (x y); "c2" (x y)',
    ]


async def test_the_timeline_is_one_statement_and_none_when_off(db: Database, settings: Settings) -> None:
    async with db.transaction() as s:
        ana = await _person(s, "ana")
        chats = [await _chat(s, ana, None, f"C{i}", f"zircon {i}", i) for i in range(5)]
    await _digest_all(db, *chats)
    async with db.sessions() as s:
        with count_statements(db) as statements:
            entries = await read_entries(s, ana, None, None)
    assert len(statements) == 1 and len(entries) == 5
    off = settings.model_copy(update={"budget_timeline": 0})
    assert _timeline(await _ask(db, off, ana, None)) is None


def test_a_long_line_is_cut_across_its_clauses_in_order_within_its_share() -> None:
    from orrery.context.timeline import Entry, _cut
    from orrery.tokens import counter_for

    digest = "; ".join(
        [*(f"alpha{i} Zeta{i} 4{i}00 small" for i in range(8)), "→ reply Omega 77 words", "final Kappa 9"]
    )
    entry = Entry(uuid.uuid4(), DAY.date(), "Plan", digest)
    counter = counter_for("offline")
    line = _cut(entry, 60, counter)
    assert counter.count(line) <= 60 and line.endswith(' …"') and line.startswith('- 2025-03-03 · "Plan": "')
    assert "Zeta0" in line or "400" in line  # the first clause keeps its heaviest words
    assert "Kappa" in line or "9" in line.split("; ")[-1]  # ... and the last clause is still there
    assert "small" not in line  # light words go first
    assert _cut(entry, 400, counter).count(";") == digest.count(";")
