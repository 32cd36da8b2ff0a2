"""Run a turn's event stream in its own task, so it finishes server-side even if the client leaves."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

T = TypeVar("T")
Entry = tuple[str, Any]


class _Mailbox:
    """What the turn's task hands the listener: a deque and one waiting future. Cheaper than an
    `asyncio.Queue` read under `asyncio.timeout` (a timeout object, the current task, a reschedule
    and a queue future for each wait). While the listener gathers a window of text, only an entry
    that ends the window (`urgent`) wakes it early: the words in between just queue, instead of
    waking it once each (~45 times a turn)."""

    def __init__(self, urgent: Callable[[Entry], bool]) -> None:
        self.entries: deque[Entry] = deque()
        self.urgent = urgent
        self._waiter: asyncio.Future[None] | None = None
        self._patient = False

    def put(self, entry: Entry) -> None:
        self.entries.append(entry)
        waiter = self._waiter
        if waiter is not None and not waiter.done() and (not self._patient or self.urgent(entry)):
            waiter.set_result(None)

    async def wait(self, seconds: float | None = None, *, patient: bool = False) -> bool:
        """Whether an entry is waiting, after at most `seconds` (None: until one is). A `patient`
        wait lasts the whole `seconds` unless an urgent entry arrives."""
        if self.entries:
            return True
        if seconds is not None and seconds <= 0:
            return False
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        self._patient = patient
        timer = None if seconds is None else loop.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            self._patient = False
            if timer is not None:
                timer.cancel()
        return bool(self.entries)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def run_detached(
    source: AsyncIterator[T],
    tasks: set[asyncio.Task[Any]],
    failed: Callable[[BaseException], T],
    merge: Callable[[T, T], T | None] = lambda _a, _b: None,
    window: float = 0.0,
    joinable: Callable[[T], bool] | None = None,
) -> AsyncIterator[T]:
    """Yield `source`'s items while a task of its own consumes it to the end.

    An exception before the first item is raised here (the request is refused: 4xx/503); after it,
    `failed(exc)` becomes the last item, so a started stream always ends with an event. The task is
    kept in `tasks` until it ends (shutdown waits for it), whether or not anyone still listens.
    Items `merge` can join (None: not joinable) travel together: those already waiting always, and
    after the first joined run, what arrives within `window` seconds too. The first is never held
    back, and a run ends at once when an item that cannot join arrives. `joinable` says whether an
    item can join at all (default: `merge` it with itself and see), asked of every item.
    """
    can_join = joinable or (lambda item: merge(item, item) is not None)
    box = _Mailbox(lambda entry: entry[0] != "item" or not can_join(entry[1]))

    async def pump() -> None:
        started = False
        try:
            async for item in source:
                started = True
                box.put(("item", item))
        except Exception as exc:
            box.put(("item", failed(exc)) if started else ("raise", exc))
        finally:
            box.put(("end", None))

    task = asyncio.create_task(pump())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    joined_once = False
    while True:
        await box.wait()
        kind, value = box.entries.popleft()
        if kind == "end":
            return
        if kind == "raise":
            raise value
        joins = can_join(value)
        value = await _gather(box, value, merge, window if joined_once and joins else 0.0)
        joined_once = joined_once or joins
        yield value


async def _gather(box: _Mailbox, value: T, merge: Callable[[T, T], T | None], wait: float) -> T:
    """`value` joined with what follows it: what is waiting now, and what arrives within `wait`
    seconds (a window an unjoinable entry ends early). An entry that cannot join stays first in
    the mailbox."""
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        while box.entries:
            kind, next_value = box.entries[0]
            joined = merge(value, next_value) if kind == "item" else None
            if joined is None:
                return value
            box.entries.popleft()
            value = joined
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0 or not await box.wait(remaining, patient=True):
            return value
