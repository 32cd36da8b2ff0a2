"""The error hierarchy every layer raises; HTTP status mapping happens only at the API edge.

```
OrreryError
├── UserError                  the caller can fix it (bad input, unknown id)
│   ├── NotFoundError          missing, or not visible to this user (same answer on purpose)
│   ├── ValidationError        well-formed request that breaks a rule
│   │   ├── UnknownRelationError
│   │   └── CrossProjectEdgeError
│   ├── ConflictError          would duplicate something unique
│   ├── AuthenticationError    missing, malformed or revoked API key
│   └── RateLimitedError       a per-user limit is reached: retry after `retry_after` seconds (429)
├── ServiceUnavailableError    busy or unreachable database, pool exhausted: retry later (503)
└── ConfigurationError         the deployment must be fixed
    └── DatabaseNotMigratedError
```
"""

from __future__ import annotations

from typing import Any


class OrreryError(Exception):
    """Base of every error Orrery raises on purpose."""


class UserError(OrreryError):
    """A mistake the caller can fix."""

    trusted = False
    """True when the message is fixed text holding no stored data: a tool shows it as written
    (backticks and all) instead of quoting it as data."""


class NotFoundError(UserError):
    """The object does not exist, or the calling user may not see it."""

    def __init__(self, kind: str, ident: object) -> None:
        super().__init__(f"{kind} {str(ident)!r} not found")
        self.kind = kind
        self.ident = ident


class ValidationError(UserError):
    """The input is well-formed but breaks a domain rule."""


class UnknownRelationError(ValidationError):
    """An edge names a relation outside the vocabulary."""


class CrossProjectEdgeError(ValidationError):
    """An edge would connect entities of two different projects."""


class ConflictError(UserError):
    """The write would duplicate something that must be unique."""


class AuthenticationError(UserError):
    """The API key is missing, malformed, unknown or revoked."""


class RateLimitedError(UserError):
    """A per-user limit (turns per minute, tokens per day) is reached."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class ServiceUnavailableError(OrreryError):
    """A temporary outage (pool exhausted, database busy or gone); the client should retry later."""

    def __init__(self, message: str, retry_after: int = 2) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConfigurationError(OrreryError):
    """The deployment is misconfigured; an operator must act."""


class DatabaseNotMigratedError(ConfigurationError):
    """The database schema is missing or not at the code's revision."""


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The JSON every error response carries (every HTTP door answers errors in this shape)."""
    return {"error": {"code": code, "message": message, "details": details}}
