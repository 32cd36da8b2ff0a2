"""How the offline model searches earlier chats when asked to, deterministically.

- "Search my earlier chats for the deadline." (also "look through my past conversations for ...",
  "search my memory for ...") -> `search_memory` with what follows "for"/"about" as the query.
- Its answer is given as found: the dated, quoted excerpts under a short lead, or the tool's plain
  reason when there are none (recall off, nothing related) or its refusal.
"""

from __future__ import annotations

import re

from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart

from orrery.agents.offline_facts import Step

TOOL = "search_memory"
_REQUEST = re.compile(
    r"\b(?:search|look\s+(?:through|in|into)|check|go\s+through)\s+(?:my|our)\s+"
    r"(?:(?:earlier|previous|past|old|other|older)\s+)?(?:chats?|conversations?|memory|history)\s+"
    r"(?:for|about|on)\s+(.+?)[.!?\s]*$",
    re.I | re.S,
)


def _answered(messages: list[ModelMessage]) -> ToolReturnPart | RetryPromptPart | None:
    """The search's answer (or refusal) after the latest user message, if any."""
    found: ToolReturnPart | RetryPromptPart | None = None
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if part.part_kind == "user-prompt":
                found = None
            elif isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name == TOOL:
                found = part
    return found


def search_step(messages: list[ModelMessage], user: str, tools: set[str]) -> Step | None:
    """The next step for an explicit request to search earlier chats, or None when it is not one."""
    done = _answered(messages)
    if isinstance(done, RetryPromptPart):
        refusal = done.model_response().removesuffix("Fix the errors and try again.").strip()
        return Step(text=f"I could not search your earlier chats: {refusal}")
    if done is not None:
        found = done.model_response_str()
        if found.startswith("No excerpts"):
            return Step(text=f"I found nothing in your earlier chats. {found}")
        return Step(text=f"Here is what I found in your earlier chats:\n\n{found}")
    asked = _REQUEST.search(user.strip())
    if not asked or TOOL not in tools:
        return None
    query = asked.group(1).strip()
    return Step(tool=TOOL, args={"query": query}) if query else None
