"""Text deltas ready together travel as one event: the first is never held back, later ones within
the window are joined, and anything that cannot join ends the run at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from orrery.agents.detach import run_detached


def _join(a: Any, b: Any) -> Any:
    return a + b if isinstance(a, str) and isinstance(b, str) else None


async def _source(items: list[tuple[float, Any]]) -> AsyncIterator[Any]:
    for pause, item in items:
        await asyncio.sleep(pause)
        yield item


async def _collect(items: list[tuple[float, Any]], window: float) -> list[Any]:
    tasks: set[asyncio.Task[Any]] = set()
    return [x async for x in run_detached(_source(items), tasks, lambda exc: str(exc), _join, window)]


async def test_the_first_delta_goes_alone_and_later_ones_within_the_window_are_joined() -> None:
    items = [(0, "Hel"), (0.3, "lo"), (0.001, " wor"), (0.001, "ld"), (0, 1), (0, "!")]
    assert await _collect(items, window=0.2) == ["Hel", "lo world", 1, "!"]


async def test_without_a_window_only_what_is_already_waiting_is_joined() -> None:
    items = [(0, "a"), (0.02, "b"), (0.02, "c")]
    assert await _collect(items, window=0.0) == ["a", "b", "c"]


async def test_a_failure_after_the_first_item_ends_the_stream_with_its_item() -> None:
    async def broken() -> AsyncIterator[Any]:
        yield "partial"
        raise RuntimeError("model went away")

    tasks: set[asyncio.Task[Any]] = set()
    got = [x async for x in run_detached(broken(), tasks, lambda exc: 0, _join, 0.01)]
    assert got == ["partial", 0]


async def test_an_item_that_cannot_join_ends_the_window_at_once() -> None:
    """The window is a minute long, yet the stream ends as soon as the unjoinable item arrives (the
    words in between wait quietly; the item does not wait for the window)."""
    items = [(0, "Hel"), (0, "lo"), (0.01, " wor"), (0.01, "ld"), (0.01, 1), (0, "!")]
    got = await asyncio.wait_for(_collect(items, window=60.0), timeout=30)
    assert got == ["Hel", "lo world", 1, "!"]
