"""Which client a model id runs through: Orrery's direct OpenAI-compatible client, or litellm.

A provider that speaks OpenAI's chat-completions protocol natively (`openai/...`, including any
server reached through `OPENAI_BASE_URL` / `OPENAI_API_BASE`) is called directly: the same
request and the same behaviour (fallbacks, retries, errors, cost, traces) without litellm's
per-call machinery or its import. Every other provider goes through litellm, the gateway to all of
them; `ORRERY_MODEL_CLIENT=litellm` sends every model through it. A litellm proxy
(`LITELLM_API_BASE`) speaks OpenAI's protocol too and is called directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from orrery.config import Settings

Client = Literal["offline", "direct", "proxy", "litellm"]
DIRECT_PROVIDERS = frozenset({"openai"})
"""litellm provider prefixes whose protocol is OpenAI's chat completions, as is."""


def client_for(model: str, settings: Settings) -> Client:
    """`offline`, `proxy` (LITELLM_API_BASE), `direct` (an OpenAI-protocol provider) or `litellm`."""
    if model == "offline":
        return "offline"
    if settings.litellm_api_base:
        return "proxy"
    provider = model.split("/", 1)[0] if "/" in model else ""
    if settings.model_client == "auto" and provider in DIRECT_PROVIDERS:
        return "direct"
    return "litellm"


def direct_model_name(model: str) -> str:
    """The provider's own name for a direct model id (`openai/gpt-4o-mini` -> `gpt-4o-mini`)."""
    return model.split("/", 1)[1]
