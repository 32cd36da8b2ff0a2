"""all-MiniLM-L6-v2 as an ONNX graph, written from the published safetensors weights.

The graph is the BERT encoder sentence-transformers runs (embeddings, six layers of 12-head
attention and an exact-GELU feed-forward, post-layer norms) followed by its mean pooling and L2
normalisation. ONNX Runtime fuses it (skip-layer-norm, bias-GELU) and runs it in float32, giving the
same vectors as PyTorch does (checked against a NumPy reference and the published similarities in
the tests). With `int8`, the weights of every product and the word embeddings are stored as int8
with one scale per output channel (per word), turned back to float32 in the graph (`DequantizeLinear`):
a quarter of the size and memory, the same float32 arithmetic, so a text's vector does not depend on
the batch it is run in (dynamic activation quantization's would), within cosine ~0.999 of float32.
This is the model Orrery ships (`minilm_export`).
"""

from __future__ import annotations

import math
from typing import Any

HIDDEN, HEADS, LAYERS = 384, 12, 6
_OPSET = 17  # LayerNormalization and ReduceSum with axes as an input


class _Graph:
    """Nodes and initializers collected in order; each helper returns its output's name."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def const(self, name: str, value: Any) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def weight(self, name: str, value: Any, *, int8: bool, axis: int, dequantize: bool = True) -> str:
        """A weight matrix, or (`int8`) its int8 values and per-`axis` scales (`name_q`,
        `name_scale`), turned back into it unless not `dequantize`."""
        import numpy as np

        if not int8:
            return self.const(name, value)
        scale = np.maximum(np.abs(value).max(axis=1 - axis), 1e-12) / 127.0
        shaped = scale[np.newaxis, :] if axis == 1 else scale[:, np.newaxis]
        quantized = np.clip(np.round(value / shaped), -127, 127).astype(np.int8)
        self.const(name + "_q", quantized)
        self.const(name + "_scale", scale.astype(np.float32))
        if not dequantize:
            return name + "_q"
        return self.op("DequantizeLinear", [name + "_q", name + "_scale"], name, axis=axis)

    def linear(self, x: str, prefix: str, out: str) -> str:
        return self.op(
            "Add", [self.op("MatMul", [x, prefix + ".weight"], out + "_mm"), prefix + ".bias"], out
        )

    def norm(self, x: str, prefix: str, out: str) -> str:
        weights = [prefix + ".weight", prefix + ".bias"]
        return self.op("LayerNormalization", [x, *weights], out, axis=-1, epsilon=1e-12)


def build(weights: dict[str, Any], *, int8: bool = False) -> bytes:
    """The serialized model (`int8`: with int8 weights, see the module docstring). Inputs: `ids` and
    `mask` (int64, batch × length) and `positions` (int64, length); output `embedding`: one
    normalised float32 row of 384 per text."""
    from onnx import TensorProto, helper

    g = _Graph()
    _constants(g, weights, int8)
    x = _embeddings(g, int8)
    for layer in range(LAYERS):
        x = _layer(g, x, f"encoder.layer.{layer}.", f"l{layer}_")
    _pool(g, x)
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
        helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "length"]),
        helper.make_tensor_value_info("positions", TensorProto.INT64, ["length"]),
    ]
    output = helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


WORDS = "embeddings.word_embeddings.weight"


def _constants(g: _Graph, weights: dict[str, Any], int8: bool) -> None:
    """The model's weights (linear layers transposed once, so a product is `x @ W`) and the scalars."""
    import numpy as np

    for name, value in weights.items():
        if name.startswith("pooler.") or "token_type" in name or not name.endswith((".weight", ".bias")):
            continue  # sentence-transformers pools the last hidden states itself; one token type
        linear = value.ndim == 2 and "embeddings." not in name
        array = np.ascontiguousarray(value.T if linear else value, dtype=np.float32)
        if linear:
            g.weight(name, array, int8=int8, axis=1)  # one scale per output channel
        elif name == WORDS and int8:
            g.weight(name, array, int8=True, axis=0, dequantize=False)  # per word; gathered in `_embeddings`
        else:
            g.const(name, array)
    g.const("token_type", weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
    g.const("heads_shape", np.array([0, 0, HEADS, HIDDEN // HEADS], dtype=np.int64))
    g.const("flat_shape", np.array([0, 0, HIDDEN], dtype=np.int64))
    scalars = {"scale": 1 / math.sqrt(HIDDEN // HEADS), "one": 1.0, "half": 0.5, "root2": math.sqrt(2.0)}
    scalars["masked"] = -1e9  # a padded token's attention score
    for name, value in scalars.items():
        g.const(name, np.array(value, dtype=np.float32))
    g.const("axes_12", np.array([1, 2], dtype=np.int64))
    g.const("axis_1", np.array([1], dtype=np.int64))
    g.const("axis_2", np.array([2], dtype=np.int64))


def _embeddings(g: _Graph, int8: bool) -> str:
    """Word + position + token-type embeddings, normalised; and the additive attention mask. With
    `int8`, only the batch's words are turned back into float32 (their rows and scales gathered)."""
    if int8:
        rows = g.op("Cast", [g.op("Gather", [WORDS + "_q", "ids"], "words_q")], "words_f", to=1)
        scale = g.op("Gather", [WORDS + "_scale", "ids"], "words_s")
        scales = g.op("Unsqueeze", [scale, "axis_2"], "words_s3")
        words = g.op("Mul", [rows, scales], "words")
    else:
        words = g.op("Gather", [WORDS, "ids"], "words")
    places = g.op("Gather", ["embeddings.position_embeddings.weight", "positions"], "places")
    x = g.op("Add", [g.op("Add", [words, places], "e_sum"), "token_type"], "e_all")
    mask = g.op("Cast", ["mask"], "mask_f", to=1)  # float
    hidden_tokens = g.op("Mul", [g.op("Sub", ["one", mask], "mask_inv"), "masked"], "mask_add")
    g.op("Unsqueeze", [hidden_tokens, "axes_12"], "attention_bias")
    return g.norm(x, "embeddings.LayerNorm", "x_embedded")


def _layer(g: _Graph, x: str, p: str, s: str) -> str:
    """One encoder layer: self-attention, then the feed-forward, each with its residual and norm."""

    def heads(name: str, perm: list[int]) -> str:
        y = g.linear(x, p + "attention.self." + name, s + name)
        y = g.op("Reshape", [y, "heads_shape"], s + name + "_h")
        return g.op("Transpose", [y], s + name + "_t", perm=perm)

    query, key, value = heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1]), heads("value", [0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [query, key], s + "qk"), "scale"], s + "scaled")
    weights = g.op("Softmax", [g.op("Add", [scores, "attention_bias"], s + "biased")], s + "softmax", axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [weights, value], s + "ctx")], s + "ctx_t", perm=[0, 2, 1, 3])
    context = g.op("Reshape", [context, "flat_shape"], s + "ctx_flat")
    attended = g.op("Add", [g.linear(context, p + "attention.output.dense", s + "att"), x], s + "att_res")
    x = g.norm(attended, p + "attention.output.LayerNorm", s + "x_att")
    hidden = g.linear(x, p + "intermediate.dense", s + "hidden")
    erf = g.op("Erf", [g.op("Div", [hidden, "root2"], s + "gelu_in")], s + "erf")
    gelu = g.op("Mul", [hidden, g.op("Add", [erf, "one"], s + "erf1")], s + "gelu_x")
    gelu = g.op("Mul", [gelu, "half"], s + "gelu")  # exact GELU, as BERT uses
    out = g.op("Add", [g.linear(gelu, p + "output.dense", s + "ffn"), x], s + "ffn_res")
    return g.norm(out, p + "output.LayerNorm", s + "x_out")


def _pool(g: _Graph, x: str) -> str:
    """Mean of the unmasked tokens' states, L2-normalised (sentence-transformers' pooling)."""
    mask = g.op("Unsqueeze", ["mask_f", "axis_2"], "mask_3d")
    total = g.op("ReduceSum", [g.op("Mul", [x, mask], "masked_x"), "axis_1"], "sum", keepdims=0)
    count = g.op("ReduceSum", ["mask_f", "axis_1"], "count", keepdims=1)
    return g.op("LpNormalization", [g.op("Div", [total, count], "mean")], "embedding", axis=-1, p=2)
