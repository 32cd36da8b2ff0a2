"""A model's credentials: whether they are present (checked once at start), and what a user reads
when the provider refuses them.

A missing or wrong key is a setting to fix, not an outage: retrying cannot help, so the failure is
`ProviderCredentialsError` (never retried, answered 502 with `x-should-retry: false`) and its message
names the variables to set. litellm's `validate_environment` knows which variables each provider
reads; its answer is a hint (a provider reached through an instance role or a local server may need
none), so a missing variable is reported, never enforced. For the providers Orrery calls directly
(`agents.protocol`) a small table gives the same answer without importing litellm (seconds and
~150 MB a server of direct models never needs); tests/agents/test_credentials.py holds them equal.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from orrery.errors import ConfigurationError

if TYPE_CHECKING:
    from orrery.config import Settings

log = logging.getLogger("orrery.credentials")
REFUSED = (401, 403)
"""HTTP statuses of a provider refusing the caller's credentials."""
PROXY_KEY = "LITELLM_API_KEY"
DIRECT_KEYS = {"openai": ("OPENAI_API_KEY",)}
"""The secret variables litellm's `validate_environment` lists for each directly called provider
(a base URL, `OPENAI_BASE_URL` / `OPENAI_API_BASE`, does not change them)."""


class ProviderCredentialsError(ConfigurationError):
    """The provider refused the credentials, or they are not set; the message says which to set."""


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
    return litellm


def _direct_keys(model: str) -> tuple[str, ...] | None:
    """The table's variables for `model`'s provider, or None when litellm is to be asked."""
    return DIRECT_KEYS.get(model.split("/", 1)[0]) if "/" in model else None


def missing_credentials(model: str) -> list[str]:
    """The secret variables (keys, tokens) litellm says `model` reads that are not set; a base URL
    it lists is left out (a local server has a default). Set means present, even if empty."""
    direct = _direct_keys(model)
    if direct is not None:
        return [name for name in direct if name not in os.environ]
    try:
        missing = _litellm().validate_environment(model)["missing_keys"]
    except Exception:  # an id litellm cannot place: nothing to report
        return []
    return [name for name in missing if any(word in name for word in ("KEY", "SECRET", "TOKEN"))]


def credential_names(model: str) -> list[str]:
    """The variables to set for `model`: the missing ones, else the provider's usual `<P>_API_KEY`."""
    missing = missing_credentials(model)
    if missing:
        return missing
    direct = _direct_keys(model)
    if direct is not None:
        return list(direct)
    try:
        provider = _litellm().get_llm_provider(model)[1]
    except Exception:
        return ["the provider's API key"]
    return [f"{str(provider).upper()}_API_KEY"]


def refused(exc: BaseException, model: str, *, explicit_key: bool = False) -> ProviderCredentialsError | None:
    """`exc` as a credentials failure of `model`'s provider (None when it is something else): the
    provider answered 401/403, or the call failed while a key it needs is not set (`explicit_key`:
    the caller passed one, so the environment is not consulted)."""
    if getattr(exc, "status_code", None) in REFUSED:
        return ProviderCredentialsError(
            f"the provider refused the credentials: set {' or '.join(credential_names(model))}"
        )
    transient = getattr(exc, "status_code", None) in (408, 409, 429) or "Timeout" in type(exc).__name__
    missing = [] if explicit_key or transient else missing_credentials(model)
    if missing:
        return ProviderCredentialsError(f"the model provider needs credentials: set {' and '.join(missing)}")
    return None


def credentials_report(settings: Settings, model: str | None = None) -> tuple[bool, str] | None:
    """`(present, one line)` about the configured model's credentials, or None for the offline model
    and a proxy (`LITELLM_API_BASE`: the proxy holds the providers' keys)."""
    name = model or settings.model
    if name == "offline" or settings.litellm_api_base or "/" not in name:
        return None
    missing = missing_credentials(name)
    if missing:
        unset = " and ".join(missing)
        return False, (
            f"model {name}: {unset} not set, so its turns will fail (set it, or ORRERY_MODEL=offline)"
        )
    return True, f"model {name}: credentials present"


def log_credentials(settings: Settings) -> None:
    """`orrery serve`'s one line at start: INFO when present, WARNING when missing."""
    report = credentials_report(settings)
    if report is not None:
        present, line = report
        log.log(logging.INFO if present else logging.WARNING, line)
