"""Every ORM model, importable from one place (Alembic reads `Base.metadata` from here)."""

from orrery.db.base import Base
from orrery.db.models.chat import AgentTransition, ChatSession, Message, SessionSummary, TurnSuspension
from orrery.db.models.docs import DocChunk, DocIndex
from orrery.db.models.graph import Edge, Entity
from orrery.db.models.identity import ApiKey, Project, ProjectMember, User, UserProfile
from orrery.db.models.knowledge import KbCollection, KbEntry, KbEntryRevision, KbRelation
from orrery.db.models.memory import ChatDigest, CheckIn, Fact, UserSummary
from orrery.db.models.ops import Job, UsageCounter
from orrery.db.models.web import TurnReceipt, WebToken

__all__ = [
    "AgentTransition",
    "ApiKey",
    "Base",
    "ChatDigest",
    "ChatSession",
    "CheckIn",
    "DocChunk",
    "DocIndex",
    "Edge",
    "Entity",
    "Fact",
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
    "TurnSuspension",
    "ProjectMember",
    "User",
    "UserProfile",
    "UserSummary",
    "WebToken",
]
