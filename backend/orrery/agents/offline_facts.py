"""How the offline model remembers and forgets facts, deterministically, so the demo shows it.

- "Remember that my sister lives in Porto." -> `remember_fact` with the clause as said; its subject
  is what "my ..." names ("sister"), so a later "remember that my sister moved to Lisbon" replaces
  it. A clause that restates a current fact (most of its words) supersedes that fact by id.
- "Forget that my sister lives in Lisbon." -> `forget_fact` for the current fact sharing the most
  words with the clause (read from the Remembered Facts section of the prompt), else it says so.
- The tool's answer (or its refusal, e.g. in a chat set to "don't remember") is said plainly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
)

from orrery.text import search_terms

FACT_TOOLS = ("remember_fact", "forget_fact")
_REQUEST = re.compile(
    r"(?:^|[.!;]\s+)(?:please[,\s]+|(?:can|could|would|will)\s+you\s+)?(remember|forget)\s+that\s+(.+?)[.!\s]*$",
    re.I | re.S,
)
_FACT_LINE = re.compile(
    r'^- \[(?:fact|instruction|preference) ([0-9a-f-]{36})\](?: about "(.*?)")? '
    r'\((?:noted|said) [^)]*\): "(.*)"$',
    re.M,
)
_MY = re.compile(r"\bmy\s+([a-z]+(?:'s\s+[a-z]+)?)", re.I)
RESTATED = 0.6
"""Share of a clause's words found in a current fact for the clause to count as restating it."""


@dataclass(frozen=True)
class Step:
    """What the offline model does next: call `tool` with `args`, or say `text`."""

    text: str = ""
    tool: str | None = None
    args: dict[str, object] = field(default_factory=dict)


def current_facts(instructions: str) -> list[tuple[str, str | None, str]]:
    """`(id, subject, text)` of each current fact listed in the prompt."""
    return [(m.group(1), m.group(2), m.group(3)) for m in _FACT_LINE.finditer(instructions)]


def _overlap(clause: str, fact: str) -> float:
    words = set(search_terms(clause))
    return len(words & set(search_terms(fact))) / len(words) if words else 0.0


def _remember(clause: str, instructions: str) -> Step:
    text = clause[0].upper() + clause[1:]
    args: dict[str, object] = {"text": text}
    mine = _MY.search(clause)
    if mine:
        args["subject"] = " ".join(mine.group(1).lower().split())
    facts = current_facts(instructions)
    best = max(facts, key=lambda f: _overlap(clause, f[2]), default=None)
    if best and _overlap(clause, best[2]) >= RESTATED:
        args["supersedes"] = best[0]
    return Step(tool="remember_fact", args=args)


def _forget(clause: str, instructions: str) -> Step:
    facts = current_facts(instructions)
    best = max(facts, key=lambda f: _overlap(clause, f[2]), default=None)
    if best is None or _overlap(clause, best[2]) == 0:
        return Step(text="I have no remembered fact about that, so there is nothing to forget.")
    return Step(tool="forget_fact", args={"fact_id": best[0]})


def _since_user(messages: list[ModelMessage]) -> list[ToolReturnPart | RetryPromptPart]:
    """Fact-tool returns and refusals after the latest user message, in order."""
    found: list[ToolReturnPart | RetryPromptPart] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if part.part_kind == "user-prompt":
                found = []
            elif isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name in FACT_TOOLS:
                found.append(part)
    return found


def fact_step(messages: list[ModelMessage], user: str, instructions: str, tools: set[str]) -> Step | None:
    """The next step for a remember/forget request, or None when the message is not one."""
    done = _since_user(messages)
    if done:
        last = done[-1]
        if isinstance(last, RetryPromptPart):
            refusal = last.model_response().removesuffix("Fix the errors and try again.").strip()
            return Step(text=f"I could not do that: {refusal}")
        if last.outcome in ERROR_OUTCOMES:  # a refusal in words, not pydantic-ai's `{"error": ...}`
            return Step(text=f"I could not do that: {last.model_response_str(wrap_if_error=False)}")
        return Step(text=last.model_response_str())
    asked = _REQUEST.search(user.strip())
    if not asked or user.strip().endswith("?"):
        return None
    verb, clause = asked.group(1).lower(), asked.group(2).strip()
    if f"{verb}_fact" not in tools or not clause:
        return None
    return _remember(clause, instructions) if verb == "remember" else _forget(clause, instructions)
