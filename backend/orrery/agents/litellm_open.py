"""litellm prices a stream when it opens; Orrery prices the reply once, from the usage chunk.

When `acompletion(stream=True)` returns, litellm's `update_response_metadata` asks its logging
object for the response's cost before any usage is known, so it counts the whole prompt with
tiktoken (`completion_cost` -> `token_counter`): ~1 ms of CPU a request, and on its first call it
loads `cl100k_base` (24-34 MB) into a server whose model counts with another encoding. Orrery never
reads that figure (`orrery.ops.cost` prices the stored reply from its usage), so `install` makes
the cost of a stream *at open* None; the cost litellm's end-of-stream logging computes from the
usage, a non-streamed response's, and every other caller's are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_LEAN = "__orrery_no_cost_at_open__"


def install() -> None:
    """Skip the cost of a stream at open (once per process)."""
    from litellm.litellm_core_utils.litellm_logging import Logging
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    original: Callable[..., Any] = Logging.response_cost_calculator
    if getattr(original, _LEAN, False):
        return

    def response_cost_calculator(self: Any, result: Any = None, *args: Any, **kwargs: Any) -> Any:
        if isinstance(result, CustomStreamWrapper):  # a stream just opened: no usage to price yet
            return None
        return original(self, result, *args, **kwargs)

    setattr(response_cost_calculator, _LEAN, True)
    Logging.response_cost_calculator = response_cost_calculator
