"""Whether a first message is conversation (`chat`) or about the team's domain (`domain`), by meaning.

Word lists fitted to a handful of messages do not generalize ("Let's plan my week" shares "plan"
with a pricing KB; "How is the team doing?" shares "team"). Intents are data instead
(`knowledge/data/message_kinds.json`): example phrasings of small talk, feelings, the person's own
planning, the weather, leisure and questions about the assistant, against example questions,
statements and instructions about how a product or service works, written for no particular KB.
A message is compared with both by the local embedder: the mean similarity of its nearest
`NEIGHBOURS` examples of each kind; `chat` wins only by `MARGIN`. Without the embedder a message is
`chat` when every content word of it is a word of the chat examples and of no domain example.

Auto-context asks this only when search found no direct hit, so a message that names an entry
(its code, its name, a distinctive word) is never dismissed as conversation.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Literal

from orrery.knowledge.evidence import content_terms
from orrery.memory.embeddings import get_embedder
from orrery.text import stem

KINDS_FILE = Path(__file__).parent / "data" / "message_kinds.json"
NEIGHBOURS = 3
"""How many nearest examples of each kind vote (their mean similarity)."""
MARGIN = 0.12
"""How much nearer the chat examples must be than the domain ones (cosine of MiniLM vectors): a
short instruction with a vague noun ("Fix the temperature thing") sits a little nearer small talk
than domain examples, small talk itself well over this."""

Kind = Literal["chat", "domain"]


@lru_cache(maxsize=1)
def examples() -> dict[str, tuple[str, ...]]:
    """The labelled phrasings per kind (read once per process)."""
    raw = json.loads(KINDS_FILE.read_text("utf-8"))
    return {"chat": tuple(raw["chat"]), "domain": tuple(raw["domain"])}


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """Stemmed content words of the chat examples, and of the domain ones (the lexical fallback)."""
    chat, domain = (
        frozenset(stem(t) for text in examples()[k] for t in content_terms(text)) for k in ("chat", "domain")
    )
    return chat, domain


def lexical_kind(message: str) -> Kind:
    """Without the embedder: `chat` when every content word is a chat example's and no domain one's."""
    terms = {stem(t) for t in content_terms(message)}
    chat, domain = _vocabulary()
    return "chat" if terms and terms <= chat - domain else "domain"


async def message_kind(message: str) -> Kind:
    """`chat` or `domain` (see the module docstring): one embedding of the message at most, the
    examples' vectors computed once per process."""
    embedder = await get_embedder()
    if embedder is None:
        return lexical_kind(message)
    chat, domain = examples()["chat"], examples()["domain"]
    texts = [message[:1000], *chat, *domain]
    rows = embedder.known(texts)
    if rows is None:
        import asyncio

        rows = await asyncio.to_thread(embedder.embed_once, texts)
    similarity = rows[1:] @ rows[0]
    near_chat = sorted(similarity[: len(chat)].tolist(), reverse=True)[:NEIGHBOURS]
    near_domain = sorted(similarity[len(chat) :].tolist(), reverse=True)[:NEIGHBOURS]
    return "chat" if sum(near_chat) / NEIGHBOURS > sum(near_domain) / NEIGHBOURS + MARGIN else "domain"
