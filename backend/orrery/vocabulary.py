"""The closed vocabularies of the domain: entity kinds, relations, agents, roles.

Changing a tuple that a database CHECK constraint mirrors needs a migration.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

EntityKind = Literal["task", "plan", "goal", "milestone", "document", "output"]
ENTITY_KINDS: Final[tuple[str, ...]] = get_args(EntityKind)

Relation = Literal[
    "belongs_to_plan",
    "has_task",
    "supports_goal",
    "requires",
    "achieved_by",
    "depends_on",
    "targets_milestone",
    "contains",
    "references",
    "referenced_by",
    "produces",
    "produced_by",
    "relates_to",
]
RELATIONS: Final[tuple[str, ...]] = get_args(Relation)

GoalType = Literal["habit", "target", "project"]
GOAL_TYPES: Final[tuple[str, ...]] = get_args(GoalType)

FocusKind = Literal["project", "task", "plan", "goal", "milestone", "document", "output"]
FOCUS_KINDS: Final[tuple[str, ...]] = get_args(FocusKind)

MessageRole = Literal["user", "assistant", "system", "tool"]
MESSAGE_ROLES: Final[tuple[str, ...]] = get_args(MessageRole)

AgentId = Literal[
    "coach", "goal_architect", "pattern_analyst", "motivator", "accountability_partner", "planner"
]
AGENT_IDS: Final[tuple[str, ...]] = get_args(AgentId)

MemberRole = Literal["owner", "editor", "viewer"]
MEMBER_ROLES: Final[tuple[str, ...]] = get_args(MemberRole)

KB_COLLECTION_PRIORITY: Final[dict[str, int]] = {
    "business-rules": 1,
    "glossary": 2,
    "decisions": 3,
    "features": 4,
    "standards": 5,
    "principles": 6,
    "tensions": 7,
    "strategy": 8,
    "tracking-events": 9,
}
"""Lower number ranks first when KB entries tie on hop distance."""


def sql_in(values: tuple[str, ...]) -> str:
    """Render a vocabulary as a SQL `IN (...)` list for CHECK constraints."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"
