"""Which database failures are temporary outages (answered 503 + `Retry-After`) and their short message.

Clients never see driver text (pool sizes, hosts, ports): the full exception is logged by the caller.
"""

from __future__ import annotations

from sqlalchemy import exc as sa

from orrery.errors import ServiceUnavailableError

BUSY = "the server is busy; retry shortly"
_CALLER_OR_CODE_ERRORS = (sa.IntegrityError, sa.DataError, sa.ProgrammingError, sa.NotSupportedError)
"""Driver errors that are not outages: constraint violations, bad data, bad SQL (a bug)."""
DISCONNECT_SQLSTATES = ("08", "57P01", "57P02", "57P03", "53300")
"""The server's codes for a connection that is gone or cannot be had: connection exceptions (class
08), a shutdown or a server still starting (57P01-57P03), too many connections (53300)."""
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


def outage_line(error: BaseException) -> str:
    """One line naming an outage's error for the log (`OperationalError: connection refused`): the
    503 it answers says enough, and a traceback per request during an outage wrote megabytes a
    minute (issue 53). The driver's own error when SQLAlchemy wrapped one."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[0][:200] if text else ''}".rstrip(": ")


class ConnectionLost(ConnectionError):
    """A raw driver call failed on a connection the driver reports closed (a server restart, an
    ended backend): raised from the driver's error by code that calls the driver itself and can ask
    its connection (the turn lock), since the error alone (asyncpg's `InterfaceError: connection
    is closed`) does not say so by its type."""


def _is_driver_disconnect(error: BaseException) -> bool:
    """A driver error that reached us unwrapped, by what it is: the server's SQLSTATE for a
    connection that is gone or cannot be had (any driver's error carrying `sqlstate`)."""
    state = getattr(error, "sqlstate", None)
    return isinstance(state, str) and state.startswith(DISCONNECT_SQLSTATES)
