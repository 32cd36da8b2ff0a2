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
) -> AsyncIterator[T]:
    """Yield `source`'s items while a task of its own consumes it to the end.

    An exception before the first item is raised here (the request is refused: 4xx/503); after it,
    `failed(exc)` becomes the last item, so a started stream always ends with an event. The task is
    kept in `tasks` until it ends (shutdown waits for it), whether or not anyone still listens.
    Items already waiting when the reader comes back are joined by `merge` (None: not joinable), so
    a slow reader gets fewer, larger items and a fast one is never made to wait for more.
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
    while True:
        kind, value = held or await queue.get()
        held = None
        if kind == "end":
            return
        if kind == "raise":
            raise value
        while kind == "item" and not queue.empty():
            held = queue.get_nowait()
            joined = merge(value, held[1]) if held[0] == "item" else None
            if joined is None:
                break
            value, held = joined, None
        yield value
