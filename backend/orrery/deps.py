"""What every tool call and agent run carries: the database and who is asking, about what."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from orrery.config import Settings
from orrery.db.engine import Database


@dataclass
class HandoffRequest:
    """Filled by the handoff tool when the model asks another specialist to take over."""

    to: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class TurnDeps:
    """Per-turn dependencies passed as pydantic-ai `deps`; every tool query is scoped to `user_id`."""

    db: Database
    user_id: uuid.UUID
    settings: Settings
    project_id: uuid.UUID | None = None
    session_id: uuid.UUID | None = None
    focus_kind: str | None = None
    focus_id: uuid.UUID | None = None
    handoff: HandoffRequest = field(default_factory=HandoffRequest)
    """What the handoff tool recorded this turn (tools are shared by every turn, this is not)."""
