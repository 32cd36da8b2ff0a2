"""What a model call cost, from litellm's price map read as JSON (`orrery.model_map`, never the
network), priced as `litellm.cost_per_token` prices a plain prompt/completion count; models without
a price (offline, an unknown proxy alias) cost null.

A reply is priced here without importing litellm (seconds and ~150 MB that a server whose models run
through the direct OpenAI client never needs): the per-token input and output rates, and the rates
above a prompt size (`..._above_200k_tokens`) once the prompt passes it. The few prices litellm
computes its own way (tiered lists, off-peak hours, per character or second, Databricks units,
Perplexity) and ids the map lacks under a provider litellm may price by size (Fireworks, Together)
are asked of litellm, imported only then; tests/ops/test_cost_parity.py holds the two equal.
"""

from __future__ import annotations

import asyncio
import logging
import re
from functools import lru_cache
from typing import Any

from orrery.model_map import entry_for

log = logging.getLogger("orrery.cost")
LITELLM_PRICED_FIELDS = (
    "tiered_pricing",
    "off_peak_pricing",
    "input_cost_per_character",
    "output_cost_per_character",
    "cost_per_second",
    "input_cost_per_second",
    "input_dbu_cost_per_token",
)
"""An entry with any of these is priced by litellm's own code, not by per-token rates alone."""
LITELLM_PRICED_PROVIDERS = frozenset({"perplexity"})
"""Providers whose litellm cost function reads the map differently (Perplexity ignores the
above-N-token rates)."""
UNPRICED_PREFIXES = ("openai/",)
"""Ids the map lacks that litellm cannot price either (an OpenAI-protocol server's own model); a
bare id the map lacks is a proxy alias, which litellm cannot place."""
INCLUSIVE_THRESHOLD_PROVIDERS = frozenset({"xai"})
"""Providers billing the higher rate from the threshold itself (litellm: `>=`, else `>`)."""
_THRESHOLD = re.compile(r"^(?:input|output)_cost_per_token_above_(\d+(?:\.\d+)?)(k?)_tokens$")


class _AskLitellm(Exception):
    """The map alone does not price this model as litellm would."""


def map_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """The USD cost from the map's rates; None when the map has no entry; `_AskLitellm` when the
    entry (or the missing one) is litellm's to price."""
    entry = entry_for(model)
    if entry is None:
        if "/" in model and not model.startswith(UNPRICED_PREFIXES):
            raise _AskLitellm
        return None
    if (
        any(f in entry for f in LITELLM_PRICED_FIELDS)
        or entry.get("litellm_provider") in LITELLM_PRICED_PROVIDERS
    ):
        raise _AskLitellm
    input_rate, output_rate = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if input_rate is None and output_rate is None:
        raise _AskLitellm
    input_rate, output_rate = _rates_for(
        entry, input_tokens, float(input_rate or 0.0), float(output_rate or 0.0)
    )
    return input_tokens * input_rate + output_tokens * output_rate


def _rates_for(
    entry: dict[str, Any], prompt: int, input_rate: float, output_rate: float
) -> tuple[float, float]:
    """The input and output rates for a prompt of `prompt` tokens: those of every threshold it
    passes, in ascending order (a rate a tier does not list stays the one below it)."""
    inclusive = entry.get("litellm_provider") in INCLUSIVE_THRESHOLD_PROVIDERS
    thresholds: dict[float, str] = {}
    for key in entry:
        found = _THRESHOLD.match(key)
        if found:
            size = float(found[1]) * (1000 if found[2] else 1)
            thresholds[size] = f"{found[1]}{found[2]}"
    for size in sorted(thresholds):
        if prompt > size or (inclusive and prompt == size):
            label = thresholds[size]
            input_rate = float(entry.get(f"input_cost_per_token_above_{label}_tokens", input_rate))
            output_rate = float(entry.get(f"output_cost_per_token_above_{label}_tokens", output_rate))
    return input_rate, output_rate


def _litellm_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    import litellm

    litellm.suppress_debug_info = True
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
    except Exception as exc:  # litellm raises several types for "no price for this model"
        _warn_unpriced(model, type(exc).__name__)
        return None
    return float(prompt_cost) + float(completion_cost)


@lru_cache(maxsize=256)
def _warn_unpriced(model: str, reason: str) -> None:
    """Say once per model that it has no price, instead of on every turn."""
    log.warning("no price for model %r in litellm's price map (%s): cost stored as null", model, reason)


async def message_cost(model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """The USD cost of one reply; `None` for the offline model or a model without a price. Priced
    from the map in place; litellm's few own prices run in a thread (a first import takes seconds,
    which must not stall the event loop)."""
    if model == "offline" or (not input_tokens and not output_tokens):
        return None
    try:
        cost = map_cost(model, input_tokens or 0, output_tokens or 0)
    except _AskLitellm:
        return await asyncio.to_thread(_litellm_cost, model, input_tokens or 0, output_tokens or 0)
    if cost is None:
        _warn_unpriced(model, "not in the map")
    return cost
