"""Run a turn's event stream in its own task, so it finishes server-side even if the client leaves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_detached(
    source: AsyncIterator[T], tasks: set[asyncio.Task[Any]], failed: Callable[[BaseException], T]
) -> AsyncIterator[T]:
    """Yield `source`'s items while a task of its own consumes it to the end.

    An exception before the first item is raised here (the request is refused: 4xx/503); after it,
    `failed(exc)` becomes the last item, so a started stream always ends with an event. The task is
    kept in `tasks` until it ends (shutdown waits for it), whether or not anyone still listens.
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
    while True:
        kind, value = await queue.get()
        if kind == "end":
            return
        if kind == "raise":
            raise value
        yield value
