"""Who is calling: users, their profiles, hashed API keys, projects and memberships."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, String, Text, false, true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from orrery.db.base import Base, Timestamps, UUIDPrimaryKey, utcnow
from orrery.vocabulary import MEMBER_ROLES, sql_in


class User(UUIDPrimaryKey, Timestamps, Base):
    """An account; everything else is reached through it."""

    __tablename__ = "users"

    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    recall_across_chats: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    """The person's choice: may a chat recall what they said in their other chats (`/v1/me/memory`)."""
    recall_other_projects: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Also from chats in other projects (and a project chat from chats without one); off by default."""

    profile: Mapped[UserProfile | None] = relationship(back_populates="user", uselist=False)

    __table_args__ = (CheckConstraint("length(email) >= 3 AND email LIKE '%@%'", name="email_format"),)


class UserProfile(Timestamps, Base):
    """What the assistant knows about a person up front (long-term memory, tier 3)."""

    __tablename__ = "user_profiles"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    preferred_name: Mapped[str | None] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    bio: Mapped[str | None] = mapped_column(Text)
    preferences: Mapped[dict[str, Any]] = mapped_column(default=dict)

    user: Mapped[User] = relationship(back_populates="profile")


class ApiKey(UUIDPrimaryKey, Base):
    """An API key, stored only as a keyed hash; the plaintext is shown once at creation."""

    __tablename__ = "api_keys"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class Project(UUIDPrimaryKey, Timestamps, Base):
    """A workspace: entities, their edges and a knowledge base live inside one project."""

    __tablename__ = "projects"

    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (CheckConstraint("length(name) > 0", name="name_not_empty"),)


class ProjectMember(Base):
    """Who may read (and write) a project; every scoped query joins through this table."""

    __tablename__ = "project_members"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), default="owner")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(f"role IN {sql_in(MEMBER_ROLES)}", name="role_known"),
        Index("ix_project_members_user_id", "user_id"),
    )
