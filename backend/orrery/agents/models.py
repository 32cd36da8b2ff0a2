"""One model factory from a string: `offline`, or a litellm model id.

Provider facts live here and nowhere else. A litellm id (`provider/model`) runs in-process through
`LiteLLMModel` over `litellm.acompletion`; with `LITELLM_API_BASE` set it goes through a litellm
proxy with pydantic-ai's OpenAI-compatible client (`LiteLLMProvider`) instead. litellm is imported
only on a real model's first request, never by commands that do not need it. Fallback models
(`ORRERY_MODEL_FALLBACKS`) are tried by pydantic-ai's `FallbackModel`, each attempt with its own
`ORRERY_MODEL_TIMEOUT_SECONDS` (see `attempts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from orrery.agents.attempts import with_fallbacks
from orrery.agents.offline import offline_model
from orrery.errors import ConfigurationError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from orrery.config import Settings
    from orrery.memory.summaries import Summarizer


def build_model(name: str, settings: Settings) -> Model:
    """The pydantic-ai model for a model string."""
    if name == "offline":
        return offline_model()
    names = [name, *(f.strip() for f in settings.model_fallbacks.split(",") if f.strip())]
    if settings.litellm_api_base:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.litellm import LiteLLMProvider

        provider = LiteLLMProvider(api_base=settings.litellm_api_base, api_key=settings.litellm_api_key)
        proxied: list[Model] = [OpenAIChatModel(n, provider=provider) for n in names]
        return with_fallbacks(proxied, settings.model_timeout_seconds)
    for n in names:
        if "/" not in n:
            raise ConfigurationError(
                f"model {n!r} is not a litellm model id: use provider/model (openai/gpt-4o-mini, "
                "anthropic/claude-sonnet-4-5, ollama/llama3) or ORRERY_MODEL=offline"
            )
    from orrery.agents.litellm_model import LiteLLMModel

    direct: list[Model] = [LiteLLMModel(n, timeout=settings.model_timeout_seconds) for n in names]
    return with_fallbacks(direct, settings.model_timeout_seconds)


def summarizer_for(
    settings: Settings, model: str | None = None, factory: Callable[[str, Settings], Model] = build_model
) -> Summarizer | None:
    """What the `summary` strategy compacts history with on `model` (default: the configured one):
    None, the extractive summarizer, for `offline`, else one on the factory's model, so a preview
    summarises as the turn would."""
    name = model or settings.model
    if name == "offline":
        return None
    from orrery.memory.summaries import ModelSummarizer

    return ModelSummarizer(factory(name, settings))
