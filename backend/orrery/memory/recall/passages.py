"""Passages of long messages: a long reply is not all or nothing. A message of at least
`PASSAGE_FROM` tokens is cut into passages (paragraphs, list items, code blocks kept whole, a
heading with what follows it); the passage sharing the rarest of the message's words with the
person's message is the relevant one. `fit` takes it instead of the whole when the whole does not
fit, or when the whole costs `LARGER` times as much and the passage holds every word of the
message the person's message shares. The split and each passage's words are remembered per message
text (the same replies are offered turn after turn).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from typing import Any

from orrery.text import analyze

PASSAGE_FROM = 200
"""Tokens from which a message may be recalled by a passage."""
LARGER = 3
"""How many times its relevant passage's cost a whole message must cost for the passage to be taken
when the whole would fit."""
SHORTEST = 60
"""Characters below which a block joins the next (a heading, a one-line lead-in to a list)."""
_ITEM = re.compile(r"^\s{0,3}(?:[-*+•]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def blocks(content: str) -> list[str]:
    """The message's blocks: paragraphs, list items, fenced code (never cut), in order."""
    out: list[str] = []
    current: list[str] = []
    fence: str | None = None

    def close() -> None:
        if current:
            out.append("\n".join(current).strip("\n"))
            current.clear()

    for line in content.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if opened and opened.group(1) == fence:
                fence = None
                close()
            continue
        if opened:
            close()
            fence = opened.group(1)
            current.append(line)
        elif not line.strip():
            close()
        elif _ITEM.match(line) or line.lstrip().startswith("#"):
            close()
            current.append(line)
        else:
            current.append(line)
    close()
    return [b for b in out if b.strip()]


@lru_cache(maxsize=1024)
def passages(content: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The message's passages with their analysed words: blocks, a short one joined to the next."""
    joined: list[str] = []
    carry = ""
    for block in blocks(content):
        text = f"{carry}\n{block}" if carry else block
        if len(text) < SHORTEST:
            carry = text
            continue
        joined.append(text)
        carry = ""
    if carry:
        if joined:
            joined[-1] = f"{joined[-1]}\n{carry}"
        else:
            joined.append(carry)
    return tuple((p, frozenset(analyze(p))) for p in joined)


def relevant(content: str, terms: Iterable[str]) -> tuple[int, int, bool] | None:
    """(k, n, whole_words): the passage (1-based `k` of `n`) sharing the rarest words of the message
    with `terms`, and whether it holds every one the message shares; None when the message has one
    passage or shares none of them."""
    parts = passages(content)
    wanted = set(terms)
    if len(parts) < 2 or not wanted:
        return None
    shared = wanted & frozenset().union(*(w for _, w in parts))
    if not shared:
        return None
    weight = {t: math.log(1 + len(parts) / sum(t in w for _, w in parts)) for t in shared}
    best = max(range(len(parts)), key=lambda i: (sum(weight[t] for t in shared & parts[i][1]), -i))
    if not shared & parts[best][1]:
        return None
    return best + 1, len(parts), shared <= parts[best][1]


def passage_unit(unit: Any, k: int, n: int) -> Any:
    """The unit (`ranked.Offered`, one message) cut to its passage `k` of `n`."""
    message = unit.messages[0]
    text = passages(message.content)[k - 1][0]
    return replace(unit, messages=[replace(message, content=text, token_counts=None)], terms=(), part=(k, n))
