"""Which client a model id runs through: Orrery's direct OpenAI-compatible client, or litellm.

A provider that speaks OpenAI's chat-completions protocol natively (`openai/...`, including any
server reached through `OPENAI_BASE_URL` / `OPENAI_API_BASE`) is called directly: the same
request and the same behaviour (fallbacks, retries, errors, cost, traces) without litellm's
per-call machinery or its import, except the few OpenAI models whose requests litellm rewrites
(`litellm_rewrites`). Every other provider goes through litellm, the gateway to all of
them; `ORRERY_MODEL_CLIENT=litellm` sends every model through it. A litellm proxy
(`LITELLM_API_BASE`) speaks OpenAI's protocol too and is called directly.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from orrery.config import Settings

Client = Literal["offline", "direct", "proxy", "litellm"]
DIRECT_PROVIDERS = frozenset({"openai"})
"""litellm provider prefixes whose protocol is OpenAI's chat completions, as is."""
_O_SERIES = re.compile(r"o\d")
_GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?")
_RESPONSES_WORDS = ("codex", "pro", "search", "research", "audio", "realtime")


def client_for(model: str, settings: Settings) -> Client:
    """`offline`, `proxy` (LITELLM_API_BASE), `direct` (an OpenAI-protocol provider) or `litellm`."""
    if model == "offline":
        return "offline"
    if settings.litellm_api_base:
        return "proxy"
    provider = model.split("/", 1)[0] if "/" in model else ""
    if settings.model_client == "auto" and provider in DIRECT_PROVIDERS:
        return "litellm" if litellm_rewrites(direct_model_name(model)) else "direct"
    return "litellm"


def litellm_rewrites(name: str) -> bool:
    """Whether litellm (pinned 1.106) changes Orrery's request for this OpenAI model beyond renaming
    `max_tokens`, so it must go through litellm to be the same request: the o-series (system
    messages rewritten, parameters refused), gpt-5.4 and later (sent to the Responses API with
    tools), and the Responses-only, search, audio and realtime models. A `gpt-5-chat` model and
    any other name (gpt-4o, gpt-4.1, gpt-5 to 5.3, a proxy's alias) are sent as they are."""
    if _O_SERIES.match(name):
        return True
    if not ("gpt-5" in name or "gpt-6" in name) or "gpt-5-chat" in name:
        return any(word in name for word in ("search", "audio", "realtime"))
    if any(word in name for word in _RESPONSES_WORDS):
        return True
    version = _GPT_VERSION.match(name)
    return version is None or (int(version.group(1)), int(version.group(2) or 0)) >= (5, 4)


def direct_model_name(model: str) -> str:
    """The provider's own name for a direct model id (`openai/gpt-4o-mini` -> `gpt-4o-mini`)."""
    return model.split("/", 1)[1]
