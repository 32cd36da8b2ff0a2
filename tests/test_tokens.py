"""Token counting per model (offline), whole-item fitting, word-boundary truncation, scaled budgets."""

from __future__ import annotations

import pytest

from orrery.config import Settings
from orrery.tokens import Budgets, context_window_for, counter_for, encoding_name_for, fit_whole_items


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("openai/gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("openai/gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("anthropic/claude-sonnet-4-5", "cl100k_base"),  # documented fallback
        ("ollama/llama3", "cl100k_base"),
        ("offline", "cl100k_base"),
    ],
)
def test_encoding_per_model(model: str, encoding: str) -> None:
    assert encoding_name_for(model) == encoding


def test_counts_are_exact_tiktoken_counts() -> None:
    import tiktoken

    text = "Finalize the pricing page — legal review first, then QA on mobile."
    counter = counter_for("openai/gpt-4o")
    assert counter.count(text) == len(tiktoken.get_encoding("o200k_base").encode(text))
    assert counter.count("") == 0
    assert counter.count_message("user", "hi") == counter.count("hi") + counter.count("user") + 4


def test_truncate_cuts_whole_words_only() -> None:
    counter = counter_for("offline")
    text = "Supercalifragilistic expialidocious words keep going and going until the budget ends here"
    for budget in range(0, 25):
        cut = counter.truncate(text, budget)
        assert counter.count(cut) <= budget
        if cut and cut != text:
            assert cut.endswith(" …") and text.startswith(cut[:-2])
            assert text[len(cut) - 2] == " "  # the cut falls on a word boundary


def test_fit_whole_items_never_splits_an_item() -> None:
    counter = counter_for("offline")
    items = ["alpha beta", "a much longer item " * 20, "gamma"]
    keep, drop = fit_whole_items(items, 10, counter)
    assert keep == [0, 2] and drop == [1]


@pytest.mark.parametrize(("window", "scale"), [(4096, 0.5), (8192, 1.0), (16384, 2.0), (1_000_000, 4.0)])
def test_budgets_scale_with_the_context_window(window: int, scale: float) -> None:
    settings = Settings(_env_file=None, context_window=window)  # type: ignore[call-arg]
    budgets = Budgets.from_settings(settings)
    assert (
        budgets.scale == scale
        and budgets.conversation == int(2500 * scale)
        and budgets.system == int(800 * scale)
    )


def test_context_window_lookup() -> None:
    assert context_window_for("gpt-4o-mini") >= 128_000
    assert context_window_for("offline") == 8192
    assert context_window_for("unknown/model-x") == 8192


def test_counting_and_window_lookup_never_import_litellm() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from orrery.tokens import counter_for, context_window_for; "
        "counter_for('gpt-4o').count('hello'); context_window_for('gpt-4o'); "
        "assert 'litellm' not in sys.modules, 'litellm imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
