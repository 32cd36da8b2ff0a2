"""The one rule that picks a turn's message-scoping strategy and its options.

Chat turns, the context endpoint, `orrery context show` and the terminal chat's `/context` all ask
this module, so what they show is what the next turn sees. Precedence: an explicit choice, else the
session's `scoping_strategy`, else `ORRERY_AGENT_STRATEGIES[agent]`, else `ORRERY_SCOPING_STRATEGY`,
else the agent definition's default. Options come from the agent definition (`max_messages` plus
`AgentDefinition.options`, e.g. a `filter` for `last_n` or `recent_window` for `relevance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from orrery.config import Settings
from orrery.memory.scoping import get_strategy
from orrery.roster import AgentDefinition

StrategySource = Literal["explicit", "session", "agent setting", "global setting", "agent default"]


@dataclass(frozen=True)
class StrategyChoice:
    """The strategy a turn uses, where the choice came from, and the options it runs with."""

    name: str
    source: StrategySource
    options: dict[str, Any] = field(default_factory=dict)


def resolve_strategy(
    agent: AgentDefinition,
    settings: Settings,
    *,
    session_strategy: str | None = None,
    explicit: str | None = None,
) -> StrategyChoice:
    """The strategy for `agent` on a turn; an unknown name is a `ValidationError` listing the known ones."""
    candidates: tuple[tuple[str | None, StrategySource], ...] = (
        (explicit, "explicit"),
        (session_strategy, "session"),
        (settings.agent_strategies.get(agent.id), "agent setting"),
        (settings.scoping_strategy, "global setting"),
    )
    name, source = next(((n, s) for n, s in candidates if n), (agent.strategy, "agent default"))
    return StrategyChoice(
        get_strategy(name).name, source, {"max_messages": agent.max_messages, **agent.options}
    )
