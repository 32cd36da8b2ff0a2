"""The web app's state: hashed sign-in tokens (one-time links and browser sessions) and the
receipt of each session's last streamed turn, so the inspector can show it on any worker."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from orrery.db.base import Base, UUIDPrimaryKey, utcnow

WEB_TOKEN_KINDS = ("login", "session")


class WebToken(UUIDPrimaryKey, Base):
    """A browser sign-in: a one-time `login` link token or a `session` cookie token (hashed)."""

    __tablename__ = "web_tokens"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    api_key_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))
    """The key the person signed in with; revoking it ends the browser session."""
    kind: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    __table_args__ = (CheckConstraint("kind IN ('login', 'session')", name="kind_known"),)


class TurnReceipt(Base):
    """What a session's most recent turn saw: `{"receipt", "system_prompt", "messages"}` from the
    turn's `context` event (replaced on every turn)."""

    __tablename__ = "turn_receipts"

    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    receipt: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
