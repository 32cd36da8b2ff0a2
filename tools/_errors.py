"""Turn a user mistake into a message the model can read and act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic_ai import ModelRetry

from backend.errors import UserError


@contextmanager
def readable_errors(hint: str = "") -> Iterator[None]:
    """Re-raise a `UserError` as `ModelRetry` (the model sees the message, plus `hint`)."""
    try:
        yield
    except UserError as exc:
        raise ModelRetry(f"{exc}{hint}") from None
