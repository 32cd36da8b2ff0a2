"""all-MiniLM-L6-v2 as an ONNX graph, written from the published safetensors weights.

The graph is the BERT encoder sentence-transformers runs (embeddings, six layers of 12-head
attention and an exact-GELU feed-forward, post-layer norms) followed by its mean pooling and L2
normalisation, over the batch's tokens as rows (batch × length, hidden). ONNX Runtime fuses it
(skip-layer-norm, bias-GELU) and runs it in float32, giving the same vectors as PyTorch does
(checked against a NumPy reference and the published similarities in the tests).

With `ranges` (`minilm_export` measures them), the products run in int8 (`MatMulIntegerToFloat`,
VNNI on x86; query, key and value as one product): every weight matrix is stored as int8 with one
scale per output channel (the word embeddings one per word), and each product's input is quantized
token by token (one scale per row, `QuantizeLinear` on axis 0), so a text's vector does not depend
on the batch it is run in, as ONNX Runtime's dynamic quantization's (one scale per batch) would.
The few input channels that run far larger than the rest are first moved into the weights
(`_smoothing`). Attention's own products, norms and GELU stay float32. This is the model Orrery
ships: half the float32 graph's CPU, within cosine 0.997 of its vectors.
"""

from __future__ import annotations

import math
from typing import Any

HIDDEN, HEADS, LAYERS = 384, 12, 6
_OPSET = 17  # LayerNormalization and ReduceSum with axes as an input


class _Graph:
    """Nodes and initializers collected in order; each helper returns its output's name. `ranges`:
    int8 products (see the module docstring); `probe`: every product's input is also an output."""

    def __init__(self, ranges: dict[str, Any] | None, probe: bool) -> None:
        self.int8, self.ranges, self.probe = ranges is not None, ranges or {}, probe
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.products: dict[str, Any] = {}  # a linear layer's float32 weight (in, out), made in `linear`
        self.probes: list[str] = []

    def const(self, name: str, value: Any) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def int8_weight(self, name: str, value: Any, *, axis: int) -> None:
        """`value` as int8 (`name_q`) with one scale per row (`axis` 0) or column (`name_scale`)."""
        import numpy as np

        scale = np.maximum(np.abs(value).max(axis=1 - axis), 1e-12) / 127.0
        shaped = scale[np.newaxis, :] if axis == 1 else scale[:, np.newaxis]
        self.const(name + "_q", np.clip(np.round(value / shaped), -127, 127).astype(np.int8))
        self.const(name + "_scale", scale.astype(np.float32))

    def linear(self, x: str, prefix: str, out: str) -> str:
        """`x @ W + b` for rows `x` (`int8`: see `int8_linear`)."""
        weight = self.products[prefix + ".weight"]
        if self.probe:
            self.probes.append(x)
        if self.int8:
            return self.int8_linear(x, prefix, out, weight)
        product = self.op("MatMul", [x, self.const(prefix + ".weight", weight)], out + "_mm")
        return self.op("Add", [product, prefix + ".bias"], out)

    def int8_linear(self, x: str, prefix: str, out: str, weight: Any) -> str:
        """`x` smoothed (`_smoothing`) and quantized row by row, times the int8 weight, scaled back to
        float32 in the same kernel (ONNX Runtime's `MatMulIntegerToFloat`; given the bias too, it
        would scale the bias by the rows' scales: 1.32 does), plus the bias."""
        smooth = _smoothing(self.ranges[x], weight)
        self.int8_weight(prefix + ".weight", weight * smooth[:, None], axis=1)
        x = self.op("Mul", [x, self.const(prefix + ".smooth", (1 / smooth).astype("float32"))], out + "_in")
        rows, scales = self.quantize(x)
        inputs = [rows, prefix + ".weight_q", scales, prefix + ".weight_scale", "zero_128"]
        product = self.op("MatMulIntegerToFloat", inputs, out + "_mm", domain="com.microsoft")
        return self.op("Add", [product, prefix + ".bias"], out)

    def quantize(self, x: str) -> tuple[str, str]:
        """`x`'s rows as uint8 around 128, each scaled by its largest magnitude, and the scales (rows × 1)."""
        largest = self.op("ReduceMax", [self.op("Abs", [x], x + "_abs")], x + "_max", axes=[1], keepdims=1)
        scales = self.op("Max", [self.op("Mul", [largest, "inv_127"], x + "_s0"), "tiny"], x + "_s")
        flat = self.op("Reshape", [scales, "flat"], x + "_sf")
        rows = self.op("QuantizeLinear", [x, flat, "zeros_128"], x + "_q", axis=0)
        return rows, scales

    def norm(self, x: str, prefix: str, out: str) -> str:
        weights = [prefix + ".weight", prefix + ".bias"]
        return self.op("LayerNormalization", [x, *weights], out, axis=-1, epsilon=1e-12)


SMOOTHING = 0.6
"""SmoothQuant's α: how much of an input channel's range moves into the weight (0.5-0.7 did best)."""


def _smoothing(inputs: Any, weight: Any) -> Any:
    """Per input channel, the factor moved from a product's input into its weight (SmoothQuant): a few
    channels carry inputs ~15x the others' (the same few in every text), and one scale per row would
    leave the others a few levels; `inputs`: each channel's largest magnitude seen (`minilm_export`)."""
    import numpy as np

    largest = np.maximum(np.abs(weight).max(axis=1), 1e-5)
    return np.maximum(inputs, 1e-5) ** SMOOTHING / largest ** (1 - SMOOTHING)


def build(weights: dict[str, Any], *, ranges: dict[str, Any] | None = None, probe: bool = False) -> bytes:
    """The serialized model: float32, or with `ranges` (each product input's largest magnitude per
    channel, named as `probe` names them) int8 products. Inputs: `ids` and `mask` (int64, batch ×
    length) and `positions` (int64, length); output `embedding`: one normalised float32 row of 384
    per text (with `probe`, then every product's input, rows × channels)."""
    from onnx import TensorProto, helper

    g = _Graph(ranges, probe)
    _constants(g, weights)
    x = _embeddings(g)
    for layer in range(LAYERS):
        x = _layer(g, x, f"encoder.layer.{layer}.", f"l{layer}_")
    _pool(g, x)
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
        helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "length"]),
        helper.make_tensor_value_info("positions", TensorProto.INT64, ["length"]),
    ]
    outputs = [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])]
    outputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["rows", None]) for name in g.probes]
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, outputs, g.initializers)
    opsets = [helper.make_opsetid("", _OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return bytes(model.SerializeToString())


WORDS = "embeddings.word_embeddings.weight"


def _constants(g: _Graph, weights: dict[str, Any]) -> None:
    """The model's weights (linear layers transposed once, so a product is `x @ W`; query, key and
    value side by side, one product) and the constants."""
    import numpy as np

    for name, value in _merged(weights).items():
        linear = value.ndim == 2 and "embeddings." not in name
        array = np.ascontiguousarray(value.T if linear else value, dtype=np.float32)
        if linear:
            g.products[name] = array  # made by `linear`: int8 ones are scaled by their inputs' ranges
        elif name == WORDS and g.int8:
            g.int8_weight(name, array, axis=0)  # one scale per word; gathered in `_embeddings`
        else:
            g.const(name, array)
    g.const("token_type", weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
    shapes: dict[str, Any] = {"rows_shape": [-1, HIDDEN], "qkv_tail": [3, HEADS, HIDDEN // HEADS]}
    shapes |= {"hidden_tail": [HIDDEN], "axes_12": [1, 2], "axis_1": [1], "axis_2": [2]}
    shapes |= {"first": 0, "second": 1, "third": 2}
    for name, value in shapes.items():
        g.const(name, np.array(value, dtype=np.int64))
    scalars = {"scale": 1 / math.sqrt(HIDDEN // HEADS), "one": 1.0, "half": 0.5, "root2": math.sqrt(2.0)}
    scalars["masked"] = -1e9  # a padded token's attention score
    if g.int8:  # for `_Graph.quantize`
        scalars |= {"inv_127": 1 / 127.0, "tiny": 1e-12}
        g.const("flat", np.array([-1], dtype=np.int64))
        g.const("zero_128", np.array(128, dtype=np.uint8))
    for name, value in scalars.items():
        g.const(name, np.array(value, dtype=np.float32))


def _merged(weights: dict[str, Any]) -> dict[str, Any]:
    """The weights the graph uses, each layer's query, key and value joined (`attention.self.qkv`)."""
    import numpy as np

    kept = {
        name: value
        for name, value in weights.items()
        # sentence-transformers pools the last hidden states itself; one token type
        if not name.startswith("pooler.") and "token_type" not in name and name.endswith((".weight", ".bias"))
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}.attention.self."
        for part in ("weight", "bias"):
            parts = [kept.pop(f"{p}{n}.{part}") for n in ("query", "key", "value")]
            kept[f"{p}qkv.{part}"] = np.concatenate(parts, axis=0)
    return kept


def _embeddings(g: _Graph) -> str:
    """Word + position + token-type embeddings, normalised, as rows; the additive attention mask, and
    (`int8`) the rows' zero points. With `int8`, only the batch's words are turned back into float32."""
    if g.int8:
        rows = g.op("Cast", [g.op("Gather", [WORDS + "_q", "ids"], "words_q")], "words_f", to=1)
        scale = g.op("Gather", [WORDS + "_scale", "ids"], "words_s")
        words = g.op("Mul", [rows, g.op("Unsqueeze", [scale, "axis_2"], "words_s3")], "words")
        zeros = g.op("Reshape", [g.op("Cast", ["ids"], "ids_u8", to=2), "flat"], "ids_flat")
        g.op("Expand", ["zero_128", g.op("Shape", [zeros], "rows")], "zeros_128")
    else:
        words = g.op("Gather", [WORDS, "ids"], "words")
    places = g.op("Gather", ["embeddings.position_embeddings.weight", "positions"], "places")
    x = g.op("Add", [g.op("Add", [words, places], "e_sum"), "token_type"], "e_all")
    mask = g.op("Cast", ["mask"], "mask_f", to=1)  # float
    hidden_tokens = g.op("Mul", [g.op("Sub", ["one", mask], "mask_inv"), "masked"], "mask_add")
    g.op("Unsqueeze", [hidden_tokens, "axes_12"], "attention_bias")
    tokens = g.op("Shape", ["ids"], "tokens")  # batch, length
    g.op("Concat", [tokens, "qkv_tail"], "qkv_shape", axis=0)
    g.op("Concat", [tokens, "hidden_tail"], "batch_shape", axis=0)
    x = g.op("Reshape", [x, "rows_shape"], "e_rows")
    return g.norm(x, "embeddings.LayerNorm", "x_embedded")


def _layer(g: _Graph, x: str, p: str, s: str) -> str:
    """One encoder layer: self-attention, then the feed-forward, each with its residual and norm."""
    qkv = g.op("Reshape", [g.linear(x, p + "attention.self.qkv", s + "qkv"), "qkv_shape"], s + "qkv_h")
    qkv = g.op("Transpose", [qkv], s + "qkv_t", perm=[2, 0, 3, 1, 4])  # 3, batch, heads, length, 32
    query, key, value = (g.op("Gather", [qkv, i], s + i + "_h") for i in ("first", "second", "third"))
    key = g.op("Transpose", [key], s + "key_t", perm=[0, 1, 3, 2])
    scores = g.op("Mul", [g.op("MatMul", [query, key], s + "qk"), "scale"], s + "scaled")
    weights = g.op("Softmax", [g.op("Add", [scores, "attention_bias"], s + "biased")], s + "softmax", axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [weights, value], s + "ctx")], s + "ctx_t", perm=[0, 2, 1, 3])
    context = g.op("Reshape", [context, "rows_shape"], s + "ctx_rows")
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
    x = g.op("Reshape", [x, "batch_shape"], "x_batch")
    mask = g.op("Unsqueeze", ["mask_f", "axis_2"], "mask_3d")
    total = g.op("ReduceSum", [g.op("Mul", [x, mask], "masked_x"), "axis_1"], "sum", keepdims=0)
    count = g.op("ReduceSum", ["mask_f", "axis_1"], "count", keepdims=1)
    return g.op("LpNormalization", [g.op("Div", [total, count], "mean")], "embedding", axis=-1, p=2)
