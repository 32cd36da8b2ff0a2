"""What the orchestrator reports about each turn: metrics always, a full log line on failure.

Kept apart from the orchestrator so its hooks stay one line each."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from orrery.ops import metrics
from orrery.ops.logs import log_turn_failure


def turn_finished(agent: str, seconds: float, usage: Any, tool_calls: Iterable[Mapping[str, Any]]) -> None:
    """A reply was stored."""
    metrics.record_turn(agent, seconds, usage.input_tokens, usage.output_tokens, tool_calls)


def turn_replayed(agent: str | None) -> None:
    """A repeated Idempotency-Key got the stored reply back (no model call)."""
    metrics.TURNS.labels(agent=agent or "-", outcome="replayed").inc()


def turn_failed(exc: BaseException, *, agent: str, user_id: uuid.UUID, session_id: uuid.UUID) -> None:
    """A model or tool failure: counted by kind, and logged in full for operators."""
    metrics.record_error(agent, type(exc).__name__)
    log_turn_failure(exc, agent=agent, user_id=user_id, session_id=session_id)
