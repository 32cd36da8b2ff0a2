"""Load the demo workspace (Maya's Atlas 2.0 launch) through the repository layer.

Loading is idempotent: when the demo user exists, nothing is duplicated; only the demo API key is
rotated (the old one revoked) because a key's plaintext cannot be shown twice.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import ChatSession, Entity, Project
from orrery.demo import content
from orrery.docs.index import index_docs
from orrery.memory.messages import append_message
from orrery.repo import chat, graph, identity, knowledge, memory

DEMO_KEY_NAME = "demo"
DEMO_DOCS = Path(__file__).resolve().parent / "docs"
"""A small PRD, OpenAPI file, Prisma schema and zod schemas, indexed into the demo project."""
DEMO_NAMESPACE = uuid.UUID("6f0b6a52-0c1e-5d8a-9a51-0a7c3e0d2b11")
"""The demo's entity ids are `uuid5(DEMO_NAMESPACE, key)`: the same on every machine, so the demo's
prompts (which quote ids) read and cost the same wherever it is loaded."""
FOCUS_KEYS = {"task": "t_pricing_page", "plan": "p_marketing", "goal": "g_ga", "document": "d_brief"}


@dataclass(frozen=True)
class DemoWorkspace:
    """What a script needs to drive the demo."""

    user_id: uuid.UUID
    project_id: uuid.UUID
    api_key: str
    focus: dict[str, uuid.UUID]
    created: bool

    def as_json(self) -> dict[str, Any]:
        """The `orrery demo load --json` document."""
        data = asdict(self)
        data.pop("created")
        return {
            "user_id": str(self.user_id),
            "project_id": str(self.project_id),
            "api_key": self.api_key,
            "focus": {k: str(v) for k, v in data["focus"].items()},
        }


async def load_demo(db: Database, server_secret: str) -> DemoWorkspace:
    """Create the demo workspace once; later calls return it with a fresh API key."""
    async with db.transaction() as session:
        user = await identity.find_user_by_email(session, content.USER["email"])
        created = user is None
        if user is None:
            user_id, project_id = await _create(session)
        else:
            user_id = user.id
            project_id = await _project_id(session, user_id)
        await index_docs(session, user_id, project_id, DEMO_DOCS)  # skipped when already current
        await identity.revoke_api_keys(session, user_id, DEMO_KEY_NAME)
        _, api_key = await identity.issue_api_key(session, user_id, DEMO_KEY_NAME, server_secret)
        focus = await focus_ids(session, project_id)
    return DemoWorkspace(user_id, project_id, api_key, focus, created)


async def _project_id(session: AsyncSession, user_id: uuid.UUID) -> uuid.UUID:
    return (
        await session.execute(
            select(Project.id).where(Project.owner_id == user_id, Project.name == content.PROJECT["name"])
        )
    ).scalar_one()


async def focus_ids(session: AsyncSession, project_id: uuid.UUID) -> dict[str, uuid.UUID]:
    """The demo's focus task, plan, goal and document ids."""
    names = {kind: _name_of(key) for kind, key in FOCUS_KEYS.items()}
    rows = await session.execute(
        select(Entity.kind, Entity.name, Entity.id).where(
            Entity.project_id == project_id, Entity.name.in_(names.values())
        )
    )
    found = {(kind, name): ident for kind, name, ident in rows.all()}
    return {kind: found[(kind, name)] for kind, name in names.items()}


def _name_of(key: str) -> str:
    return content.TASKS[key][0] if key in content.TASKS else content.ENTITIES[key][1]


async def _create(session: AsyncSession) -> tuple[uuid.UUID, uuid.UUID]:
    u = content.USER
    user = await identity.create_user(
        session,
        u["email"],
        u["display_name"],
        preferred_name=u["preferred_name"],
        timezone=u["timezone"],
        bio=u["bio"],
        preferences=u["preferences"],
    )
    project = await identity.create_project(session, user.id, **content.PROJECT)
    ids = await _create_entities(session, user.id, project.id)
    for src, rel, dst in content.EDGES:
        await graph.create_edge(session, user.id, ids[src], rel, ids[dst])
    await _create_knowledge(session, user.id, project.id)
    now = utcnow()
    for days_ago, mood, note, goal in content.CHECK_INS:
        await memory.add_check_in(
            session,
            user.id,
            note=note,
            mood=mood,
            project_id=project.id,
            goal_id=ids[goal] if goal else None,
            at=now - timedelta(days=days_ago, hours=-1),
        )
    await memory.save_user_summary(session, user.id, **content.SUMMARY)
    await _create_chat(session, user.id, project.id, ids["t_pricing_page"])
    return user.id, project.id


async def _create_entities(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID
) -> dict[str, uuid.UUID]:
    now = utcnow()
    specs: dict[str, graph.EntitySpec] = {}
    for key, (kind, name, state, type_key, description, extra) in content.ENTITIES.items():
        due = extra.get("due_in_days")
        specs[key] = graph.EntitySpec(
            kind=kind,
            name=name,
            state=state,
            type_key=type_key,
            description=description,
            due_at=now + timedelta(days=due) if due is not None else None,
            goal_type=extra.get("goal_type"),
            is_scratch=bool(extra.get("scratch")),
            is_context_document=bool(extra.get("context")),
        )
    for key, (name, state, description) in content.TASKS.items():
        specs[key] = graph.EntitySpec(
            kind="task", name=name, state=state, type_key="task.work", description=description
        )
    ids: dict[str, uuid.UUID] = {}
    for key, spec in specs.items():
        fixed = uuid.uuid5(DEMO_NAMESPACE, key)
        ids[key] = (await graph.create_entity(session, user_id, project_id, spec, entity_id=fixed)).id
    return ids


async def _create_knowledge(session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID) -> None:
    collections = {}
    for slug, name, description in content.COLLECTIONS:
        col = await knowledge.create_collection(
            session, user_id, project_id, slug, name, description=description
        )
        collections[slug] = col.id
    entries = {}
    for code, (slug, name, description, paths) in content.KB_ENTRIES.items():
        entry = await knowledge.create_entry(
            session, user_id, collections[slug], code, name, description, {"code_paths": paths}
        )
        entries[code] = entry.id
    for src, rel, dst in content.KB_RELATIONS:
        await knowledge.relate_entries(session, user_id, entries[src], rel, entries[dst])


async def _create_chat(
    session: AsyncSession, user_id: uuid.UUID, project_id: uuid.UUID, task_id: uuid.UUID
) -> None:
    c: ChatSession = await chat.create_session(
        session,
        user_id,
        project_id=project_id,
        focus_kind="task",
        focus_id=task_id,
        title="Pricing page blockers",
    )
    for role, text, agent in content.CHAT:
        await append_message(session, user_id, c.id, chat.NewMessage(role, text, agent_id=agent))
    await chat.record_transition(session, user_id, c.id, "planner", "question about task dependencies")
