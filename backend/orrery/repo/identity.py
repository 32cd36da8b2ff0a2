"""Users, profiles, API keys, projects and memberships, and a person's memory choices."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.base import utcnow
from orrery.db.direct import Direct, Loader, parts
from orrery.db.models import ApiKey, Project, ProjectMember, User, UserProfile, WebToken
from orrery.errors import AuthenticationError, ConflictError, NotFoundError, ValidationError
from orrery.repo.lineage import forget_receipts
from orrery.repo.scope import as_uuid, member_project_ids, require_project
from orrery.security import generate_key, hash_key, is_well_formed
from orrery.vocabulary import MEMBER_ROLES


def _clean(text: str, field: str, max_len: int) -> str:
    value = text.strip()
    if not value:
        raise ValidationError(f"{field} must not be empty")
    if len(value) > max_len:
        raise ValidationError(f"{field} is longer than {max_len} characters")
    return value


async def create_user(
    session: AsyncSession,
    email: str,
    display_name: str,
    *,
    preferred_name: str | None = None,
    timezone: str = "UTC",
    bio: str | None = None,
    preferences: dict[str, Any] | None = None,
) -> User:
    """Create a user with a profile; a taken email is a `ConflictError` and writes nothing."""
    email = _clean(email, "email", 320).lower()
    if "@" not in email:
        raise ValidationError(f"email {email!r} is not an email address")
    if await find_user_by_email(session, email) is not None:
        raise ConflictError(f"a user with email {email!r} already exists")
    user = User(email=email, display_name=_clean(display_name, "display_name", 200))
    user.profile = UserProfile(
        preferred_name=preferred_name, timezone=timezone, bio=bio, preferences=preferences or {}
    )
    session.add(user)
    await session.flush()
    return user


async def find_user_by_email(session: AsyncSession, email: str) -> User | None:
    """The user with this email, or None."""
    return (
        await session.execute(select(User).where(User.email == email.strip().lower()))
    ).scalar_one_or_none()


async def require_user_by_email(session: AsyncSession, email: str) -> User:
    """The user with this email, or `NotFoundError`."""
    user = await find_user_by_email(session, email)
    if user is None:
        raise NotFoundError("user", email)
    return user


async def get_user(session: AsyncSession, user_id: uuid.UUID | str) -> User:
    """The user, or `NotFoundError`."""
    uid = as_uuid(user_id, "user")
    user = await session.get(User, uid)
    if user is None:
        raise NotFoundError("user", uid)
    return user


async def get_profile(session: AsyncSession, user_id: uuid.UUID) -> UserProfile:
    """The user's profile; a user without one is an error, never a made-up profile."""
    profile = await session.get(UserProfile, user_id)
    if profile is None:
        raise NotFoundError("user profile", user_id)
    return profile


async def issue_api_key(
    session: AsyncSession, user_id: uuid.UUID, name: str, server_secret: str
) -> tuple[ApiKey, str]:
    """Create an API key; returns the row and the plaintext, which is never stored."""
    await get_user(session, user_id)
    new = generate_key(server_secret)
    key = ApiKey(
        user_id=user_id, name=_clean(name, "key name", 100), prefix=new.prefix, key_hash=new.key_hash
    )
    session.add(key)
    await session.flush()
    return key, new.plaintext


async def revoke_api_keys(session: AsyncSession, user_id: uuid.UUID, name: str) -> int:
    """Revoke every active key of the user with this name; returns how many.

    Browser sessions end with them: those signed in with a revoked key stop resolving through the
    key; one-time login links not yet used, and the sessions links opened (both tied to no key), are
    revoked here. Taking a user's key away never leaves a browser signed in, nor a way to sign one in."""
    now = utcnow()
    result = await session.execute(
        update(ApiKey)
        .where(ApiKey.user_id == user_id, ApiKey.name == name, ApiKey.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    revoked = int(getattr(result, "rowcount", 0) or 0)
    if revoked:
        await session.execute(
            update(WebToken)
            .where(
                WebToken.user_id == user_id,
                WebToken.api_key_id.is_(None),  # login links and the sessions they opened
                WebToken.revoked_at.is_(None),
            )
            .values(revoked_at=now)
        )
    return revoked


KEY_USE_RESOLUTION = timedelta(minutes=1)
"""`last_used_at` is written at most this often per key, so authenticating is almost always read-only."""


_KEY, _OWNER = Loader.of(ApiKey), Loader.of(User)
_KEY_OWNER = Direct(
    select(*_KEY.columns, *_OWNER.columns)
    .join(User, User.id == ApiKey.user_id)
    .where(ApiKey.key_hash == bindparam("key_hash"))
)
"""Every authenticated request runs it: built once per process, run on the driver."""


async def key_owner(session: AsyncSession, plaintext: str, server_secret: str) -> tuple[ApiKey, User]:
    """The active key and its user, read only; anything else is an `AuthenticationError`."""
    if not is_well_formed(plaintext):
        raise AuthenticationError("malformed API key: expected 'orr_<prefix>_<secret>'")
    rows = await _KEY_OWNER.rows(session, {"key_hash": hash_key(plaintext, server_secret)})
    if rows:
        key_values, user_values = parts(rows[0], _KEY, _OWNER)
        key, user = _KEY.build(key_values), _OWNER.build(user_values)
        if key is not None and user is not None and key.revoked_at is None:
            return key, user
    raise AuthenticationError("unknown or revoked API key")


def key_use_is_stale(key: ApiKey) -> bool:
    """Whether `last_used_at` is old enough to be written again."""
    return key.last_used_at is None or utcnow() - key.last_used_at >= KEY_USE_RESOLUTION


async def record_key_use(session: AsyncSession, key_id: uuid.UUID) -> None:
    """Stamp `last_used_at` (skipped when another request already did within the resolution)."""
    now = utcnow()
    await session.execute(
        update(ApiKey)
        .where(
            ApiKey.id == key_id,
            (ApiKey.last_used_at.is_(None)) | (ApiKey.last_used_at < now - KEY_USE_RESOLUTION),
        )
        .values(last_used_at=now)
    )


async def authenticate(session: AsyncSession, plaintext: str, server_secret: str) -> User:
    """The user owning an active key (stamping its use); anything else is an `AuthenticationError`."""
    key, user = await key_owner(session, plaintext, server_secret)
    if key_use_is_stale(key):
        key.last_used_at = utcnow()
    return user


async def create_project(
    session: AsyncSession, owner_id: uuid.UUID, name: str, description: str | None = None
) -> Project:
    """Create a project owned (and joined) by `owner_id`."""
    await get_user(session, owner_id)
    project = Project(owner_id=owner_id, name=_clean(name, "project name", 200), description=description)
    session.add(project)
    await session.flush()
    session.add(ProjectMember(project_id=project.id, user_id=owner_id, role="owner"))
    await session.flush()
    return project


async def add_member(
    session: AsyncSession, acting_user_id: uuid.UUID, project_id: uuid.UUID, user_id: uuid.UUID, role: str
) -> ProjectMember:
    """Add a member; only a project's owner or editor may, and each user joins once."""
    if role not in MEMBER_ROLES:
        raise ValidationError(f"unknown role {role!r}; expected one of {', '.join(MEMBER_ROLES)}")
    await require_project(session, acting_user_id, project_id, write=True)
    await get_user(session, user_id)
    member = ProjectMember(project_id=project_id, user_id=user_id, role=role)
    try:
        async with session.begin_nested():
            session.add(member)
    except IntegrityError:
        raise ConflictError(f"user {str(user_id)!r} is already a member of this project") from None
    return member


async def list_projects(session: AsyncSession, user_id: uuid.UUID) -> Sequence[Project]:
    """The projects the user belongs to, newest first."""
    result = await session.execute(
        select(Project).where(Project.id.in_(member_project_ids(user_id))).order_by(Project.created_at.desc())
    )
    return result.scalars().all()


async def count_users(session: AsyncSession) -> int:
    """How many users exist (used to decide whether a database is empty)."""
    return int((await session.execute(select(func.count()).select_from(User))).scalar_one())


@dataclass(frozen=True)
class MemoryChoices:
    """What a person lets their chats recall: their other chats at all, and other projects' too."""

    recall_across_chats: bool
    recall_other_projects: bool


async def memory_choices(session: AsyncSession, user_id: uuid.UUID) -> MemoryChoices:
    """The person's memory choices (one query)."""
    row = (
        await session.execute(
            select(User.recall_across_chats, User.recall_other_projects).where(User.id == user_id)
        )
    ).one_or_none()
    if row is None:
        raise NotFoundError("user", user_id)
    return MemoryChoices(bool(row[0]), bool(row[1]))


async def set_memory_choices(
    session: AsyncSession,
    user_id: uuid.UUID,
    *,
    recall_across_chats: bool | None = None,
    recall_other_projects: bool | None = None,
) -> MemoryChoices:
    """Change the choices given (None leaves one as it is); the new choices. Recall reads them from
    the row on every turn, so every worker follows from its next turn. Narrowing recall deletes the
    person's stored receipts (each holds a prompt that may have recalled other chats)."""
    user = await get_user(session, user_id)
    if (recall_across_chats is False and user.recall_across_chats) or (
        recall_other_projects is False and user.recall_other_projects
    ):
        await forget_receipts(session, user_id)
    if recall_across_chats is not None:
        user.recall_across_chats = bool(recall_across_chats)
    if recall_other_projects is not None:
        user.recall_other_projects = bool(recall_other_projects)
    await session.flush()
    return MemoryChoices(user.recall_across_chats, user.recall_other_projects)
