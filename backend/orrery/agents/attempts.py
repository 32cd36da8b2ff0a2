"""Model attempts: each one timed on its own, fallbacks tried after a failure or a hang, and every
turn failure turned into a short message for the client (the full exception goes to the log).

`ORRERY_MODEL_TIMEOUT_SECONDS` bounds one attempt (a request, or a stream from opening to its end),
never the whole turn, so `ORRERY_MODEL_FALLBACKS` still has time to run after the first model hangs.
A fallback runs when an attempt fails or times out before its reply starts streaming.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from orrery.agents.caller import StructuredOutputError
from orrery.agents.credentials import PROXY_KEY, REFUSED, ProviderCredentialsError
from orrery.db.failures import as_unavailable, outage_line

log = logging.getLogger("orrery.turns")


class ModelAttemptTimeout(TimeoutError):
    """One model attempt took longer than `ORRERY_MODEL_TIMEOUT_SECONDS`."""

    def __init__(self, model: str, seconds: float) -> None:
        super().__init__(f"the model {model} did not answer within {seconds:g} s")
        self.model, self.seconds = model, seconds


class TimedModel(WrapperModel):
    """Bounds each request (or stream, opening to end) of the wrapped model to `seconds`."""

    def __init__(self, wrapped: Model, seconds: float) -> None:
        super().__init__(wrapped)
        self.seconds = seconds

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        try:
            async with asyncio.timeout(self.seconds):
                return await self.wrapped.request(messages, model_settings, model_request_parameters)
        except TimeoutError as exc:
            raise ModelAttemptTimeout(self.wrapped.model_name, self.seconds) from exc

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        try:
            async with asyncio.timeout(self.seconds):
                async with self.wrapped.request_stream(
                    messages, model_settings, model_request_parameters, run_context
                ) as response:
                    yield response
        except TimeoutError as exc:
            raise ModelAttemptTimeout(self.wrapped.model_name, self.seconds) from exc


def timed(model: Model, seconds: float) -> Model:
    """`model` with a per-attempt timeout, unless it already has one (or is a fallback chain of them)."""
    if isinstance(model, (TimedModel, FallbackModel)):
        return model
    return TimedModel(model, seconds)


def with_fallbacks(models: Sequence[Model], seconds: float) -> Model:
    """The first model, then each fallback in turn after a failure or timeout; each attempt timed."""
    attempts = [timed(m, seconds) for m in models]
    if len(attempts) == 1:
        return attempts[0]
    return FallbackModel(attempts[0], *attempts[1:], fallback_on=(Exception,))


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """`(code, message)` for a failed turn: short, safe to show, no driver or provider internals."""
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions
        if inner and all(isinstance(e, ModelAttemptTimeout) for e in inner):
            return "model_timeout", "; ".join(str(e) for e in inner)
        return describe_failure(inner[-1]) if inner else ("model_error", "the model failed; retry shortly")
    if isinstance(exc, ModelAttemptTimeout):
        return "model_timeout", str(exc)
    if isinstance(exc, ProviderCredentialsError):
        return "model_auth", str(exc)
    if isinstance(exc, StructuredOutputError):
        return "invalid_output", str(exc)
    if getattr(exc, "status_code", None) == 429:
        return "rate_limited", "the model provider is limiting requests (HTTP 429); retry after a pause"
    if isinstance(exc, ModelHTTPError) and exc.status_code in REFUSED:  # pydantic-ai's client: the proxy's
        return "model_auth", f"the provider refused the credentials: set {PROXY_KEY}"
    outage = as_unavailable(exc)
    if outage is not None:
        return "unavailable", str(outage)
    if _lost_connection(exc):
        return "model_error", "the connection to the model provider was lost; retry shortly"
    if isinstance(exc, ModelHTTPError):
        return "model_error", f"the model provider answered HTTP {exc.status_code}; retry shortly"
    if isinstance(exc, UsageLimitExceeded):
        return "model_error", "the model used too many requests or tokens for one turn"
    if isinstance(exc, UnexpectedModelBehavior):
        return "model_error", "the model gave an answer Orrery could not use; retry"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return "model_error", f"the model provider failed (HTTP {status}); retry shortly"
    return "model_error", "the model failed; retry shortly"


def _lost_connection(exc: BaseException) -> bool:
    """Whether the provider's connection broke (refused, reset, or a stream cut off mid-body): an
    HTTP transport error anywhere in the exception's chain, whatever status the client library
    that wrapped it invented (litellm reports a dropped stream as HTTP 500)."""
    seen: BaseException | None = exc
    for _ in range(10):  # a chain is short; a bound in case it loops
        if seen is None:
            return False
        if isinstance(seen, (httpx.TransportError, ConnectionError)) and not isinstance(
            seen, httpx.TimeoutException
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def failure_data(exc: BaseException, session_id: object, *, logged: bool = False) -> dict[str, Any]:
    """The `error` event's data for a failed turn; the whole exception goes to the log only (here,
    unless the caller `logged` it already). A credentials failure is one line (it says what to fix)
    and not worth retrying (`retry: false`) until the setting changes."""
    code, message = describe_failure(exc)
    if not logged:
        if as_unavailable(exc) is not None:  # a database outage: one line per turn, not a traceback
            log.error("turn on session %s failed: %s (%s)", session_id, message, outage_line(exc))
        else:
            one_line = code in ("model_auth", "rate_limited")
            log.error(
                "turn on session %s failed: %s", session_id, message, exc_info=None if one_line else exc
            )
    data: dict[str, Any] = {"message": message, "code": code, "retry": code != "model_auth"}
    if code == "rate_limited":
        data["retry_after"] = provider_retry_after(exc)
    return data


def provider_retry_after(exc: BaseException) -> int | None:
    """The seconds a rate-limited provider asked to wait (its `Retry-After`), when it said: read
    from the error, or from the error it wraps (litellm keeps the OpenAI SDK's)."""
    seen: BaseException | None = exc
    for _ in range(10):  # a chain is short; a bound in case it loops
        while isinstance(seen, BaseExceptionGroup) and seen.exceptions:
            seen = seen.exceptions[-1]
        if seen is None:
            return None
        for headers in (
            getattr(getattr(seen, "response", None), "headers", None),
            getattr(seen, "headers", None),
        ):
            value = _seconds((headers or {}).get("retry-after"))
            if value is not None:
                return value
        seen = seen.__cause__ or seen.__context__
    return None


def _seconds(value: object) -> int | None:
    try:
        return max(1, int(float(str(value)))) if value is not None else None
    except ValueError:
        return None


def shared_failure_data() -> dict[str, Any]:
    """The `error` event's data for a duplicate request (same Idempotency-Key, or a resent
    conversation) that waited for the one running turn, which failed: its outcome, not a second run."""
    return {
        "message": "the same request was already running and its turn failed; retry shortly",
        "code": "model_error",
        "retry": True,
    }


def is_truncated(response: ModelResponse) -> bool:
    """Cut off by the token limit, or a provider's stream that ended without a finish reason."""
    if response.finish_reason == "length":
        return True
    return response.finish_reason is None and response.provider_name not in (None, "function", "test")
