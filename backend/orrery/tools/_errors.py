"""Turn a user mistake into a message the model can read and act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic_ai import ModelRetry

from orrery.errors import UserError
from orrery.text import inline_data


@contextmanager
def readable_errors(hint: str = "") -> Iterator[None]:
    """Re-raise a `UserError` as `ModelRetry` (the model sees the message, plus `hint`); the message
    can echo stored names (a list of epics, an entry name), so it is quoted as data, unless the
    error says its message is fixed text (`trusted`)."""
    try:
        yield
    except UserError as exc:
        message = str(exc) if exc.trusted else inline_data(str(exc))
        raise ModelRetry(f"{message}{hint}") from None
