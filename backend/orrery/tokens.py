"""Exact token counting per model, offline, and budgets scaled to the model's context window.

Encodings come from tiktoken. This machine (and many deployments) cannot download them, but
litellm's wheel ships `cl100k_base`, `o200k_base` and `p50k_base`; `configure_tiktoken_cache` points
`TIKTOKEN_CACHE_DIR` there explicitly (without importing litellm, which takes ~2 s), so counting never
depends on import order.

Model -> encoding: OpenAI's GPT-4o / 4.1 / 5 / o-series use `o200k_base`; GPT-4 / 3.5 and embeddings
use `cl100k_base`; Codex-era models use `p50k_base`. **Fallback:** every other model (Anthropic,
Gemini, Llama, Mistral, the offline model, unknown ids) is counted with `cl100k_base`. Their own
tokenizers differ by a few percent, so budgets for them are close estimates, not exact bounds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from orrery.model_map import litellm_dir, model_map

if TYPE_CHECKING:
    import tiktoken

    from orrery.config import Settings

FALLBACK_ENCODING = "cl100k_base"
REFERENCE_WINDOW = 8192
"""The budgets in Settings are written for a model with this context window."""
SCALE_LIMITS = (0.5, 4.0)
MESSAGE_OVERHEAD = 4
"""Tokens a chat message costs beyond its content (role and separators), as OpenAI documents."""

_ENCODING_RULES: list[tuple[str, str]] = [
    (r"(^|/)(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)", "o200k_base"),
    (r"(^|/)(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)", "cl100k_base"),
    (r"(^|/)(text-davinci|code-davinci|code-cushman)", "p50k_base"),
]
_KNOWN_WINDOWS = {"offline": 8192}


def configure_tiktoken_cache() -> None:
    """Point tiktoken at litellm's bundled encodings unless the operator chose a directory."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    base = litellm_dir()
    if base is not None and (base / "litellm_core_utils" / "tokenizers").is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(base / "litellm_core_utils" / "tokenizers")


@lru_cache(maxsize=64)
def encoding_name_for(model: str) -> str:
    """The tiktoken encoding used to count tokens for a model id (see the module docstring); once
    per process and model id (each turn asks)."""
    lowered = model.lower()
    for pattern, name in _ENCODING_RULES:
        if re.search(pattern, lowered):
            return name
    return FALLBACK_ENCODING


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    configure_tiktoken_cache()
    import tiktoken

    encoding = tiktoken.get_encoding(name)
    _drop_python_ranks(encoding)
    return encoding


def _drop_python_ranks(encoding: tiktoken.Encoding) -> None:
    """Free the Python copy of the encoding's vocabulary (27 MB for `o200k_base`, 9 for
    `cl100k_base`): encoding runs on the Rust copy, and the pinned tiktoken reads the Python one only
    to pickle an encoding that is not registered by name (a registered one pickles by name)."""
    import tiktoken.registry

    if tiktoken.registry.ENCODINGS.get(encoding.name) is encoding and encoding._mergeable_ranks:
        encoding._mergeable_ranks = {}


COUNT_CACHE_MAX_CHARS = 20_000
"""Texts up to this long have their counts remembered (an LRU of 4,096 texts per process)."""


def load_encodings(names: Iterable[str]) -> None:
    """Load these encodings now (a server's warm-up, in a worker thread): each takes 0.3-0.6 s of
    CPU, which the first message stored or counted would otherwise pay inside a user's turn."""
    for name in names:
        _encoding(name)


def _count(encoding: str, text: str) -> int:
    return len(_encoding(encoding).encode(text, disallowed_special=()))


_count_cached = lru_cache(maxsize=4096)(_count)


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens exactly with one encoding; `exact` is False for fallback-counted models."""

    model: str
    encoding_name: str
    exact: bool

    def count(self, text: str) -> int:
        """Tokens in `text` (remembered: prompts, modules and sections repeat turn after turn)."""
        if not text:
            return 0
        if len(text) > COUNT_CACHE_MAX_CHARS:
            return _count(self.encoding_name, text)
        return _count_cached(self.encoding_name, text)

    def count_message(self, role: str, content: str) -> int:
        """Tokens a chat message costs, including per-message overhead."""
        return self.count(content) + self.count(role) + MESSAGE_OVERHEAD

    def truncate(self, text: str, budget: int, marker: str = " …") -> str:
        """The longest prefix of whole words that fits `budget` tokens (with `marker` when cut)."""
        if self.count(text) <= budget:
            return text
        words = text.split(" ")
        lo, hi = 0, len(words)
        while lo < hi:  # binary search on the number of whole words
            mid = (lo + hi + 1) // 2
            if self.count(" ".join(words[:mid]) + marker) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(words[:lo]) + marker if lo else ""


def counter_for(model: str) -> TokenCounter:
    """The token counter for a model id."""
    name = encoding_name_for(model)
    return TokenCounter(model=model, encoding_name=name, exact=name != FALLBACK_ENCODING or "gpt" in model)


@lru_cache(maxsize=1)
def _litellm_windows() -> dict[str, int]:
    """Context windows from litellm's bundled model map (`orrery.model_map`: no litellm import)."""
    windows: dict[str, int] = {}
    for model, info in model_map().items():
        size = info.get("max_input_tokens") or info.get("max_tokens")
        if isinstance(size, int) and size > 0:
            windows[model] = size
    return windows


def context_window_for(model: str) -> int:
    """The model's context window: litellm's map (with or without provider prefix), else 8,192."""
    if model in _KNOWN_WINDOWS:
        return _KNOWN_WINDOWS[model]
    windows = _litellm_windows()
    bare = model.split("/", 1)[1] if "/" in model else model
    return windows.get(model) or windows.get(bare) or REFERENCE_WINDOW


SECTION_NAMES = (
    "system",
    "profile",
    "expertise",
    "focus",
    "related",
    "knowledge",
    "conversation",
    "earlier_chats",
    "facts",
    "instructions",
    "timeline",
    "caller",
)


@dataclass(frozen=True)
class Budgets:
    """Token budget per context section."""

    system: int = 800
    profile: int = 300
    expertise: int = 1500
    focus: int = 1000
    related: int = 500
    knowledge: int = 600
    conversation: int = 2500
    earlier_chats: int = 2000
    facts: int = 250
    instructions: int = 600
    timeline: int = 800
    caller: int = 800
    scale: float = field(default=1.0, compare=False)

    def of(self, section: str) -> int:
        """The budget of a named section."""
        value: int = getattr(self, section)
        return value

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None) -> Budgets:
        """Settings' budgets scaled by the model's window relative to 8,192 tokens (x0.5 to x4)."""
        window = settings.context_window or context_window_for(model or settings.model)
        low, high = SCALE_LIMITS
        scale = min(high, max(low, window / REFERENCE_WINDOW))
        return cls(
            **{name: int(getattr(settings, f"budget_{name}") * scale) for name in SECTION_NAMES},
            scale=scale,
        )


def fit_whole_items(
    items: Sequence[str], budget: int, counter: TokenCounter, *, separator: str = "\n"
) -> tuple[list[int], list[int]]:
    """Indices of items that fit `budget` in order (each whole, never cut), and of those left out."""
    included: list[int] = []
    excluded: list[int] = []
    used = 0
    sep = counter.count(separator)
    for i, item in enumerate(items):
        cost = counter.count(item) + (sep if included else 0)
        if used + cost <= budget:
            included.append(i)
            used += cost
        else:
            excluded.append(i)
    return included, excluded
