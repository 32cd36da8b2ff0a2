"""Give the heap that a server's warm-up freed back to the operating system, once.

Warming up allocates and frees large transients: tiktoken reads an encoding into a Python dict
(~27 MB for `o200k_base`) before its Rust copy is built and the dict dropped, ONNX Runtime optimises
the embedder's graph, the model map is parsed. glibc keeps most of that freed memory mapped for
reuse, so it stays in the worker's RSS until something asks for it; `malloc_trim(0)` returns the
free pages at once (~15-20 MB a worker, measured on an idle `orrery serve`). Elsewhere (musl,
macOS) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_free_memory() -> bool:
    """Return the heap's free pages to the OS (glibc); whether it could."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
