"""One model factory from a string: `offline`, or a litellm model id.

Provider facts live here and nowhere else. Each model of the chain runs on the client
`agents.protocol.client_for` names: an `openai/...` model through Orrery's direct OpenAI client
(`OpenAIModel`), any other provider in-process through `LiteLLMModel` over `litellm.acompletion`
(every model with `ORRERY_MODEL_CLIENT=litellm`); with `LITELLM_API_BASE` set every model goes
through that litellm proxy, with the direct client. litellm is imported only on a litellm model's
first request, never by commands or servers that do not need it. Fallback models
(`ORRERY_MODEL_FALLBACKS`) are tried by pydantic-ai's `FallbackModel`, each attempt with its own
`ORRERY_MODEL_TIMEOUT_SECONDS` (see `attempts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from orrery.agents.attempts import with_fallbacks
from orrery.agents.credentials import PROXY_KEY
from orrery.agents.offline import offline_model
from orrery.agents.protocol import client_for, direct_model_name
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
    return with_fallbacks([_one_model(n, settings) for n in names], settings.model_timeout_seconds)


def _one_model(name: str, settings: Settings) -> Model:
    """One model of the chain, on the client `agents.protocol` names for it."""
    client = client_for(name, settings)
    timeout = settings.model_timeout_seconds
    if client == "proxy":
        from orrery.agents.openai_model import OpenAIModel

        key = settings.litellm_api_key or "litellm-placeholder"  # a proxy may take no key
        return OpenAIModel(
            name,
            timeout=timeout,
            base_url=settings.litellm_api_base,
            api_key=key,
            key_variable=PROXY_KEY,
            system="litellm",
        )
    if "/" not in name:
        raise ConfigurationError(
            f"model {name!r} is not a litellm model id: use provider/model (openai/gpt-4o-mini, "
            "anthropic/claude-sonnet-4-5, ollama/llama3) or ORRERY_MODEL=offline"
        )
    if client == "direct":
        from orrery.agents.openai_model import OpenAIModel

        return OpenAIModel(name, sent_name=direct_model_name(name), timeout=timeout)
    from orrery.agents.litellm_model import LiteLLMModel

    return LiteLLMModel(name, timeout=timeout)


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
