"""A reply priced from the map read as JSON costs what `litellm.cost_per_token` says, for every chat
model in litellm's map, at prompt sizes below, at and above each price tier; and pricing an OpenAI
model never imports litellm."""

from __future__ import annotations

import logging
import subprocess
import sys

import litellm
import pytest

from orrery.model_map import model_map
from orrery.ops import cost
from orrery.ops.cost import map_cost, message_cost

COUNTS = [
    (10, 20),
    (1000, 500),
    (128_000, 7),
    (150_000, 1000),
    (200_000, 3),
    (200_001, 3),
    (272_001, 1),
    (600_000, 10),
]
MODES = ("chat", "completion", "responses")


def _litellm(model: str, prompt: int, completion: int) -> float | None:
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
    except Exception:
        return None
    return float(prompt_cost) + float(completion_cost)


def _names() -> list[str]:
    """Every chat model under its key in the map, and as `provider/key` where the key is bare."""
    names = []
    for key, info in model_map().items():
        if info.get("mode") in MODES:
            names.append(key)
            provider = info.get("litellm_provider")
            if "/" not in key and provider:
                names.append(f"{provider}/{key}")
    return names


def test_every_chat_model_costs_what_litellm_says() -> None:
    litellm.suppress_debug_info = True
    compared, providers = 0, set()
    for name in _names():
        for prompt, completion in COUNTS:
            try:
                mine = map_cost(name, prompt, completion)
            except cost._AskLitellm:
                break  # priced by litellm itself (and never called here: some of those go online)
            theirs = _litellm(name, prompt, completion)
            if theirs is None:  # an id litellm cannot place (a bare id of some providers, or the
                continue  # provider/key form of a key filed under a pseudo-provider): the map prices it
            assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-15), (name, prompt, completion)
            compared += 1
            providers.add(name.split("/")[0])
    assert compared > 20_000
    assert {"openai", "anthropic", "gemini", "vertex_ai", "xai", "azure", "bedrock"} <= providers


def test_tiered_prices_switch_above_their_threshold() -> None:
    tiered = [k for k, v in model_map().items() if "input_cost_per_token_above_200k_tokens" in v]
    assert tiered, "the map has models priced by prompt size"
    name = (
        next(k for k in tiered if k.startswith("gemini/"))
        if any(k.startswith("gemini/") for k in tiered)
        else tiered[0]
    )
    below, above = map_cost(name, 200_000, 0), map_cost(name, 200_001, 0)
    assert below is not None and above is not None and above / 200_001 > below / 200_000
    assert above == pytest.approx(_litellm(name, 200_001, 0))


@pytest.mark.parametrize(
    ("model", "priced"),
    [
        ("openai/gpt-4o-mini", True),
        ("gpt-4o-mini", True),
        ("anthropic/claude-sonnet-4-5", True),
        ("fireworks_ai/accounts/fireworks/models/unknown-70b", True),  # litellm prices it by size
        ("openai/my-local-model", False),
        ("my-proxy-alias", False),
    ],
)
async def test_message_cost_matches_litellm_and_unknown_is_null(model: str, priced: bool) -> None:
    found = await message_cost(model, 1200, 300)
    assert (found is not None) == priced
    assert (
        found == pytest.approx(_litellm(model, 1200, 300)) if priced else _litellm(model, 1200, 300) is None
    )


async def test_an_unknown_model_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="orrery.cost"):
        assert await message_cost("openai/no-such-model-xyz", 10, 10) is None
        assert await message_cost("openai/no-such-model-xyz", 10, 10) is None
    assert len([r for r in caplog.records if "no-such-model-xyz" in r.getMessage()]) == 1


def test_pricing_an_openai_model_imports_no_litellm() -> None:
    script = (
        "import asyncio, sys; from orrery.ops.cost import message_cost; "
        "print(asyncio.run(message_cost('openai/gpt-4o-mini', 1000, 100)) > 0, 'litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"], out.stdout + out.stderr
