"""What a model call cost, from litellm's price map (read from the installed package, never the network
when `LITELLM_LOCAL_MODEL_COST_MAP=True`). Models without a price (offline, a proxy alias) cost null."""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache

log = logging.getLogger("orrery.cost")


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
    """The USD cost of one reply; `None` for the offline model or a model litellm has no price for.
    Runs in a thread: the first call imports litellm, which must not stall the event loop."""
    if model == "offline" or (not input_tokens and not output_tokens):
        return None
    return await asyncio.to_thread(_litellm_cost, model, input_tokens or 0, output_tokens or 0)
