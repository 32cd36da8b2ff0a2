"""One model factory from a string: `offline`, or a litellm model id.

Provider facts live here and nowhere else. With `LITELLM_API_BASE` set, any model id goes through a
litellm proxy with pydantic-ai's OpenAI-compatible client (`LiteLLMProvider`). litellm itself is
imported only when a real model is built, never by commands that do not need it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.agents.offline import offline_model
from backend.errors import ConfigurationError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from backend.config import Settings


def build_model(name: str, settings: Settings) -> Model:
    """The pydantic-ai model for a model string."""
    if name == "offline":
        return offline_model()
    if settings.litellm_api_base:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.litellm import LiteLLMProvider

        provider = LiteLLMProvider(api_base=settings.litellm_api_base, api_key=settings.litellm_api_key)
        return OpenAIChatModel(name, provider=provider)
    raise ConfigurationError(
        f"model {name!r} needs a litellm proxy for now: set LITELLM_API_BASE (and LITELLM_API_KEY), "
        "or use ORRERY_MODEL=offline. The in-process litellm adapter is not built yet."
    )
