"""The agent roster as data: prompt, message scoping, tools and routing words per agent.

Expertise modules are chosen by their own front matter (`prompts/expertise/*.md`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from orrery.errors import ConfigurationError, ValidationError
from orrery.resources import prompts_dir
from orrery.vocabulary import AGENT_IDS

PROMPTS_DIR = prompts_dir("agents")
READ_TOOLS = (
    "get_linked_entities",
    "find_entities",
    "build_context",
    "load_context_for_task",
    "get_entry",
    "search_knowledge",
    "get_context_for_story",
    "get_relevant_specs",
    "search_context",
    "list_stories_by_epic",
    "get_context_summary",
)
FACT_TOOLS = ("remember_fact", "forget_fact")
"""Every agent may remember or forget a fact the person states (issue 40 §2)."""
SEARCH_TOOLS = ("search_memory",)
"""Every agent may search the person's earlier chats on demand (issue 49 §4)."""
CAPTURE_TOOLS = ("update_entry", "create_entry")
"""Every agent may be asked domain work, so every agent may improve or capture knowledge (issue 52 §2):
an instruction the router gives the accountability partner is no dead end."""


@dataclass(frozen=True)
class AgentDefinition:
    """One specialist."""

    id: str
    title: str
    description: str
    route_words: tuple[str, ...]
    max_messages: int
    strategy: str = "relevance"
    """Message scoping: the last `max_messages` verbatim plus recalled older messages (see
    `backend/orrery/memory/scoping/relevance.py`); `last_n` stays selectable by name."""
    write_tools: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    extra_tools: tuple[str, ...] = ()
    """Further registry tools this agent may call (a plugin's own tools)."""
    prompt_text: str | None = None
    """The base prompt itself (plugin agents); built-in agents read `prompts/agents/<id>.md`."""
    plugin: str | None = None
    """The plugin that contributed this agent (None: built in)."""

    @property
    def tools(self) -> tuple[str, ...]:
        """Every read tool, the fact tools, memory search and the capture tools, plus this agent's writes
        and extra tools."""
        own = tuple(t for t in self.write_tools + self.extra_tools if t not in CAPTURE_TOOLS)
        return READ_TOOLS + FACT_TOOLS + SEARCH_TOOLS + CAPTURE_TOOLS + own

    def prompt(self) -> str:
        """The base prompt: `prompt_text`, else `prompts/agents/<id>.md`."""
        return self.prompt_text.strip() if self.prompt_text else _prompt(self.id)


@lru_cache(maxsize=16)
def _prompt(agent_id: str) -> str:
    path = PROMPTS_DIR / f"{agent_id}.md"
    if not path.exists():
        raise ConfigurationError(f"agent prompt {path} is missing")
    return path.read_text(encoding="utf-8").strip()


AGENTS: dict[str, AgentDefinition] = {
    a.id: a
    for a in (
        AgentDefinition(
            "coach",
            "Coach",
            "Open conversations; the default.",
            ("help", "stuck", "think", "decide", "advice"),
            10,
        ),
        AgentDefinition(
            "goal_architect",
            "Goal architect",
            "Shapes goals: type, finish line, milestones.",
            ("goal", "goals", "objective", "target", "smart", "woop", "achieve", "aim"),
            10,
        ),
        AgentDefinition(
            "pattern_analyst",
            "Pattern analyst",
            "Finds recurring behaviour; runs experiments.",
            ("pattern", "patterns", "always", "keep", "again", "why", "habit", "trend"),
            5,
        ),
        AgentDefinition(
            "motivator",
            "Motivator",
            "Restores momentum; celebrates wins.",
            (
                "motivation",
                "motivated",
                "tired",
                "discouraged",
                "celebrate",
                "proud",
                "win",
                "burnout",
                "energy",
            ),
            5,
        ),
        AgentDefinition(
            "accountability_partner",
            "Accountability partner",
            "Check-ins and commitments.",
            ("check", "checkin", "commitment", "committed", "promised", "did", "progress", "update"),
            10,
        ),
        AgentDefinition(
            "planner",
            "Planner",
            "Sequencing, dependencies and what to do next.",
            (
                "plan",
                "next",
                "block",
                "blocks",
                "blocked",
                "depends",
                "dependency",
                "order",
                "schedule",
                "deadline",
                "milestone",
                "first",
                "priority",
                "task",
                "tasks",
            ),
            10,
            write_tools=("index_docs",),
        ),
    )
}
assert set(AGENTS) == set(AGENT_IDS)  # built-ins; plugins add theirs at startup


def get_agent(agent_id: str) -> AgentDefinition:
    """An agent by id (plugins' too, once the composition root registered them), or a
    `ValidationError` listing the roster."""
    if agent_id not in AGENTS:
        raise ValidationError(f"unknown agent {agent_id!r}; expected one of {', '.join(AGENTS)}")
    return AGENTS[agent_id]
