"""Cheap reads of what a message asks, so auto-context runs only when knowledge can help.

- A question about the focused entity's own links ("What plan does this task belong to?") or its
  state ("What's blocking this?", "How far along is it?", "What's next?") is answered by the Linked
  Entities section and `get_linked_entities`: a knowledge packet would only add noise.
- A knowledge question ("How does overage billing work?") or an instruction to change something
  ("Update the usage overage billing rule") deserves an offer to capture knowledge even when the
  project's knowledge base is still empty; small talk ("Any tips for better sleep?")
  and personal questions ("How do I ...") do not.
"""

from __future__ import annotations

import re

from orrery.text import search_terms
from orrery.vocabulary import ENTITY_KINDS, RELATIONS

_KINDS = {k for kind in ENTITY_KINDS for k in (kind, kind + "s")}
_RELATION_WORDS = {w for rel in RELATIONS for w in rel.split("_")} | {
    "belong", "belongs", "block", "blocks", "blocked", "blocking", "blocker", "blockers", "depend",
    "dependent", "dependents", "dependency", "dependencies", "support", "supported", "linked", "link",
    "links", "connected", "related", "part", "parent", "child", "children", "upstream", "downstream",
    "waiting", "waits", "wait", "contained", "referenced", "references", "achieve", "achieves", "target",
}  # fmt: skip
LINK_WORDS = frozenset(_KINDS | _RELATION_WORDS | {"linked", "anything", "else", "other", "others"})
STATE_WORDS = frozenset({
    "progress", "far", "along", "status", "state", "next", "left", "remaining", "remain", "remains",
    "open", "done", "finished", "finish", "complete", "completed", "completion", "percent", "percentage",
    "stuck", "holding", "hold", "holds", "behind", "track", "going", "ahead", "todo", "outstanding",
    "blocking", "blocker", "blockers", "blocked", "block", "blocks", "step", "steps", "stand", "stands",
})  # fmt: skip
"""Words that ask how the focus stands: progress, what is left or next, what holds it up."""
_FILLER = frozenset({
    "what", "whats", "how", "hows", "where", "standing", "us", "we", "still",
    "work", "working", "tell", "show", "give", "need", "needs", "get", "go", "do", "up", "there", "yet",
    "currently", "now", "right", "so", "thing", "things", "item", "items", "whole", "overall",
})  # fmt: skip
"""Question filler that says nothing about a subject (only with a state word or a link word)."""
_KNOWLEDGE_QUESTION = re.compile(
    r"^\s*(how (does|do|is|are|should|would|can)|what (is|are|does|do|'s)|what's|why (do|does|is|are)"
    r"|when (do|does|is|are|should)|which (rule|policy|decision)|explain|define|describe)\b",
    re.IGNORECASE,
)
_WORK_REQUEST = re.compile(
    r"^\s*(?:(?:please|let's|lets|let us|we need to|we should|i need to|i want to|can you|could you)\s+)?"
    r"(?:update|fix|change|add|remove|rework|redo|rewrite|implement|build|create|design|draft|define|"
    r"document|review|adjust|extend|replace|migrate|ship|finalize|finalise|set up|clean up)\b",
    re.IGNORECASE,
)
_SEARCH_REQUEST = re.compile(
    r"^\s*(?:please\s+)?(?:(?:can|could) you\s+)?(?:search|look up|look for|find|check)\b.*?"
    r"\b(?:knowledge base|knowledge|kb)\b",
    re.IGNORECASE,
)
"""An imperative search of the knowledge base ("Search the knowledge base for hazmat declarations",
"Look up the free delivery threshold in the KB")."""
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|me|my|myself)\b", re.IGNORECASE)


def is_link_question(message: str) -> bool:
    """Every content word is an entity kind or a relationship word ("What plan does this task
    belong to?"), or the message asks how the focus itself stands (`asks_about_focus`): the graph
    answers it, not the knowledge base."""
    terms = search_terms(message)
    return bool(terms) and (all(t in LINK_WORDS for t in terms) or asks_about_focus(message))


def asks_about_focus(message: str) -> bool:
    """A question about the focused entity itself: its blockers, progress, status or next step
    ("What's blocking this?", "How far along is it?", "What's next?"). At least one state word, and
    every other content word a kind, a relationship word or question filler."""
    terms = search_terms(message)
    known = LINK_WORDS | STATE_WORDS | _FILLER
    return any(t in STATE_WORDS for t in terms) and all(t in known for t in terms)


def asks_for_work(message: str) -> bool:
    """An instruction to change something of the product ("Update the usage overage billing rule on
    the pricing page", "Let's rework checkout for teams"): domain work, even in an empty KB."""
    return bool(_WORK_REQUEST.search(message))


def asks_for_knowledge(message: str) -> bool:
    """A how/what/why question about how things work here, not about the person asking, or an
    imperative search of the knowledge base (it asks the same question)."""
    if _SEARCH_REQUEST.search(message):
        return True
    return bool(_KNOWLEDGE_QUESTION.search(message)) and not _FIRST_PERSON.search(message)
