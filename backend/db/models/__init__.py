"""Every ORM model, importable from one place (Alembic reads `Base.metadata` from here)."""

from backend.db.base import Base
from backend.db.models.chat import AgentTransition, ChatSession, Message, SessionSummary
from backend.db.models.docs import DocChunk, DocIndex
from backend.db.models.graph import Edge, Entity
from backend.db.models.identity import ApiKey, Project, ProjectMember, User, UserProfile
from backend.db.models.knowledge import KbCollection, KbEntry, KbEntryRevision, KbRelation
from backend.db.models.memory import CheckIn, UserSummary
from backend.db.models.ops import Job, UsageCounter
from backend.db.models.web import TurnReceipt, WebToken

__all__ = [
    "AgentTransition",
    "ApiKey",
    "Base",
    "ChatSession",
    "CheckIn",
    "DocChunk",
    "DocIndex",
    "Edge",
    "Entity",
    "Job",
    "KbCollection",
    "KbEntry",
    "KbEntryRevision",
    "KbRelation",
    "Message",
    "Project",
    "SessionSummary",
    "UsageCounter",
    "TurnReceipt",
    "ProjectMember",
    "User",
    "UserProfile",
    "UserSummary",
    "WebToken",
]
