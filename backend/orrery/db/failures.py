"""Which database failures are temporary outages (answered 503 + `Retry-After`) and their short message.

Clients never see driver text (pool sizes, hosts, ports): the full exception is logged by the caller.
"""

from __future__ import annotations

from sqlalchemy import exc as sa

from orrery.errors import ServiceUnavailableError

BUSY = "the server is busy; retry shortly"
_CALLER_OR_CODE_ERRORS = (sa.IntegrityError, sa.DataError, sa.ProgrammingError, sa.NotSupportedError)
"""Driver errors that are not outages: constraint violations, bad data, bad SQL (a bug)."""
UNAVAILABLE = "the database is unavailable; retry shortly"


def as_unavailable(error: BaseException, retry_after: int = 2) -> ServiceUnavailableError | None:
    """The 503 to answer for `error`, or None when it is not a temporary outage."""
    if isinstance(error, ServiceUnavailableError):
        return error
    if isinstance(error, sa.TimeoutError):  # the pool had no free connection in time
        return ServiceUnavailableError(BUSY, retry_after)
    if isinstance(error, sa.OperationalError) and "locked" in str(error.orig).lower():
        return ServiceUnavailableError(BUSY, retry_after)
    if isinstance(error, sa.DBAPIError) and not isinstance(error, _CALLER_OR_CODE_ERRORS):
        return ServiceUnavailableError(UNAVAILABLE, retry_after)
    if isinstance(error, (ConnectionError, TimeoutError)) or _is_driver_disconnect(error):
        return ServiceUnavailableError(UNAVAILABLE, retry_after)
    return None


def _is_driver_disconnect(error: BaseException) -> bool:
    """asyncpg's connection-level errors, when they reach us unwrapped."""
    module = type(error).__module__
    name = type(error).__name__
    return module.startswith("asyncpg") and ("Connection" in name or "CannotConnect" in name)
