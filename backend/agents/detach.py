"""Run a turn's event stream in its own task, so it finishes server-side even if the client leaves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_detached(
    source: AsyncIterator[T],
    tasks: set[asyncio.Task[Any]],
    failed: Callable[[BaseException], T],
    merge: Callable[[T, T], T | None] = lambda _a, _b: None,
    window: float = 0.0,
) -> AsyncIterator[T]:
    """Yield `source`'s items while a task of its own consumes it to the end.

    An exception before the first item is raised here (the request is refused: 4xx/503); after it,
    `failed(exc)` becomes the last item, so a started stream always ends with an event. The task is
    kept in `tasks` until it ends (shutdown waits for it), whether or not anyone still listens.
    Items `merge` can join (None: not joinable) travel together: those already waiting always, and
    after the first joined run, what arrives within `window` seconds too. The first is never held
    back, and a run ends at once when an item that cannot join arrives.
    """
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    async def pump() -> None:
        started = False
        try:
            async for item in source:
                started = True
                queue.put_nowait(("item", item))
        except Exception as exc:
            queue.put_nowait(("item", failed(exc)) if started else ("raise", exc))
        finally:
            queue.put_nowait(("end", None))

    task = asyncio.create_task(pump())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    held: tuple[str, Any] | None = None
    joined_once = False
    while True:
        kind, value = held or await queue.get()
        if kind == "end":
            return
        if kind == "raise":
            raise value
        joinable = merge(value, value) is not None  # a probe: None means this kind never joins
        value, held = await _gather(queue, value, merge, window if joined_once and joinable else 0.0)
        joined_once = joined_once or joinable
        yield value


async def _gather(
    queue: asyncio.Queue[tuple[str, Any]], value: T, merge: Callable[[T, T], T | None], wait: float
) -> tuple[T, tuple[str, Any] | None]:
    """`value` joined with what follows it: what is queued now, and what arrives within `wait`
    seconds. Returns the joined item and the first queued entry that could not join (if any)."""
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            if queue.empty() and remaining > 0:
                async with asyncio.timeout(remaining):  # unlike `wait_for`, no task per wait
                    entry = await queue.get()
            else:
                entry = queue.get_nowait()
        except (asyncio.QueueEmpty, TimeoutError):
            return value, None
        joined = merge(value, entry[1]) if entry[0] == "item" else None
        if joined is None:
            return value, entry
        value = joined
