"""`project_pulse`: the project's tasks by state, for a retrospective."""

from __future__ import annotations

from typing import Literal

from pydantic_ai import ModelRetry, RunContext

from orrery.deps import TurnDeps
from orrery.plugins import readable_errors
from orrery.text import inline_data
from orrery.tools.registry import ToolSpec


async def project_pulse(ctx: RunContext[TurnDeps], detail: Literal["tasks", "all"] = "tasks") -> str:
    """Count the current project's tasks by state (and, with detail "all", every kind). Read-only.

    Args:
        detail: "tasks" for task states only, "all" to add entity counts by kind.
    """
    from orrery.repo.summary import project_summary

    if ctx.deps.project_id is None:
        raise ModelRetry("this conversation is not in a project; ask the user which project to look at")
    with readable_errors():
        async with ctx.deps.db.sessions() as session:
            summary = await project_summary(session, ctx.deps.user_id, ctx.deps.project_id)
    # every stored string (a name, a state: anyone in the project may have written it) is quoted as
    # data, so it can never form a heading, a tag or an instruction in the model's prompt
    counts = sorted(summary.task_states.items())
    states = ", ".join(f"{n} {inline_data(state)}" for state, n in counts) or "no tasks"
    lines = [f"Tasks in {inline_data(summary.name)}: {states}."]
    if detail == "all":
        kinds = ", ".join(f"{n} {inline_data(k)}" for k, n in sorted(summary.entities.items()))
        lines.append(f"Entities: {kinds}.")
    return "\n".join(lines)


PROJECT_PULSE = ToolSpec("project_pulse", project_pulse, read_only=True, group="retro")
"""Registered as a ToolSpec to say it only reads (a bare function counts as a writing tool)."""
