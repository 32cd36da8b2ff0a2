"""A cheap router for a session's first message: keyword overlap with each agent's routing words.

Later switches come from the model itself through the `handoff_to_agent` tool.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import ChatSession
from orrery.repo import chat
from orrery.roster import AGENTS, AgentDefinition, get_agent
from orrery.text import stem, tokenize

DEFAULT_AGENT = "coach"


def route(message: str, focus_kind: str | None = None) -> tuple[str, str]:
    """The agent for a first message and why; a focus on a task or plan leans towards the planner."""
    words = {stem(w) for w in tokenize(message)}
    scores = {agent.id: len(words & {stem(w) for w in agent.route_words}) for agent in AGENTS.values()}
    if focus_kind in ("task", "plan", "milestone"):
        scores["planner"] += 1
    if focus_kind == "goal":
        scores["goal_architect"] += 1
    best = max(scores, key=lambda a: (scores[a], a == DEFAULT_AGENT))
    if scores[best] == 0:
        return DEFAULT_AGENT, "no specialist matched the first message"
    wanted = {stem(w) for w in AGENTS[best].route_words}
    hits = sorted({w for w in tokenize(message) if stem(w) in wanted})
    reason = f"first message mentions {', '.join(hits)}" if hits else f"focused on a {focus_kind}"
    return best, reason


async def choose_agent(
    s: AsyncSession, user_id: uuid.UUID, record: ChatSession, text: str, agent: str | None
) -> AgentDefinition:
    """A turn's agent: chosen explicitly, else the session's active one, else routed by the first
    message; a switch is recorded as a transition (in `s`: a read session keeps it as a memo)."""
    if agent is not None:
        chosen, reason = get_agent(agent), "chosen explicitly"
    elif record.active_agent:
        chosen, reason = get_agent(record.active_agent), ""
    else:
        routed, reason = route(text, record.focus_kind)
        chosen = get_agent(routed)
    if record.active_agent != chosen.id:
        await chat.record_transition(s, user_id, record.id, chosen.id, reason)
    return chosen
