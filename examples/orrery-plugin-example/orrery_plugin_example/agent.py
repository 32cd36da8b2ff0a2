"""The `retro` agent: runs a short retrospective, with the plugin's strategy and tool."""

from orrery.roster import AgentDefinition

RETRO = AgentDefinition(
    id="retro",
    title="Retro facilitator",
    description="Runs retrospectives: what went well, what to change, which decisions to keep.",
    route_words=("retro", "retrospective", "postmortem", "lessons"),
    max_messages=10,
    strategy="decisions_first",
    extra_tools=("project_pulse",),
    prompt_text=(
        "You facilitate a short retrospective for the user's project. Start from facts: call "
        "`project_pulse` for where the tasks stand, then ask what went well, what did not, and which "
        "decision to keep or change. Keep it to three questions at a time."
    ),
)
