"""How the offline model follows the prompt's own instructions for knowledge, greets back, and says
a tool's refusal in plain words.

- A loaded packet answers a statement too ("Update the usage overage billing rule..." after a
  packet): its best entry is read and quoted (`from_packet`).
- High confidence: the reply opens with the packet's one-line receipt; medium: it asks whether
  more context is needed; low: it names the loosely related entries and asks which is meant, else
  offers to capture; none (or an empty knowledge base): it offers to capture knowledge.
- A greeting gets a greeting, by the person's name when the profile has one.
- A tool's refusal (`ModelRetry`) or error JSON is said as a sentence, never shown raw.
"""

from __future__ import annotations

import json
import re

from pydantic_ai.messages import RetryPromptPart, ToolReturnPart

from orrery.agents.offline_answers import best_code, candidates, packet_codes
from orrery.knowledge.evidence import is_small_talk
from orrery.text import search_terms

_NAME = re.compile(r'^- \*\*Name:\*\* "(.+?)"$', re.M)
_RECEIPT = re.compile(
    r"Open your reply with this one-line receipt, then proceed with the task grounded in these "
    r"entries: (.+?)_$",
    re.M,
)
_CONFIDENCE = re.compile(r"\*\*Confidence:\*\* (High|Medium|Low|None)")
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|howdy|good\s+(?:morning|afternoon|evening)|thanks?|thank\s+you)\b", re.I
)
_THANKS = re.compile(r"\bthanks?\b|\bthank\s+you\b|\bcheers\b", re.I)
CAPTURE = (
    "If you explain how it works here, I can capture it as knowledge (with `create_entry`) while we work."
)
"""The capture offer; `offline_capture` carries it out when the person explains and says yes."""


def greeting(user: str, instructions: str, subject: str | None) -> str | None:
    """A greeting back for small talk ("Hello!"), else None."""
    if not (is_small_talk(user) or (not search_terms(user) and _GREETING.search(user))):
        return None
    name = _NAME.search(instructions)
    who = f" {name.group(1)}" if name else ""
    if _THANKS.search(user):
        return f"You're welcome{who}."
    about = f" about {subject}" if subject else ""
    return (
        f"Hello{who}! Ask me anything{about}: what blocks it, what's next, when something is due, or how "
        "something works in the project."
    )


def _unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).strip()


def tool_error(part: ToolReturnPart | RetryPromptPart) -> str:
    """A tool's refusal or error result, as a sentence."""
    if isinstance(part, RetryPromptPart):
        message = part.model_response().removesuffix("Fix the errors and try again.")
    else:
        raw = part.model_response_str()
        try:
            data = json.loads(raw)
            message = str(data.get("error") or data.get("message") or raw) if isinstance(data, dict) else raw
        except ValueError:
            message = raw
    message = _unescaped(message).rstrip(".")
    if part.tool_name == "get_context_for_story":
        story = re.search(r"US-\d+", message, re.I)
        named = f" {story.group(0).upper()}" if story else ""
        return f"There is no story{named} in this project's indexed docs ({message})."
    return f"`{part.tool_name}` could not answer this: {message}."


def from_packet(user: str, instructions: str) -> str | None:
    """The code of the loaded packet's entry that best matches the message, if a packet is loaded."""
    if "## Context Loaded" not in instructions:
        return None
    return best_code(user, instructions)


def after_entry(answer: str, packet: str | None) -> str:
    """An entry's answer, as the packet's confidence asks: the receipt first when high, a question
    about more context when medium."""
    confidence = _CONFIDENCE.search(packet or "")
    level = confidence.group(1) if confidence else ""
    receipt = _RECEIPT.search(packet or "")
    if level == "High" and receipt:
        return f"{_unescaped(receipt.group(1))}\n\n{answer}"
    if level == "Medium":
        return (
            f"{answer}\n\nThat is what the knowledge base has on this (a medium-confidence match). Do you "
            "need more context before we go deeper?"
        )
    return answer


def after_packet(user: str, packet: str) -> str:
    """No confident entry: the loosely related entries and "which one?" (low), else the capture offer."""
    confidence = _CONFIDENCE.search(packet)
    options = (
        candidates(user, packet) or [f"- **{c}:** {n.split(' (')[0]}" for c, n in packet_codes(packet)][:4]
    )
    if confidence and confidence.group(1) == "Low" and options:
        return (
            "I only found loosely related entries in the knowledge base, so I am not sure which one you "
            "mean. "
            "Is it one of these?\n\n"
            + "\n".join(options)
            + f"\n\nIf none fits, the knowledge base does not cover this yet. {CAPTURE}"
        )
    return (
        f"I found nothing in the project's knowledge base on this: it does not cover this area yet. {CAPTURE}"
    )
