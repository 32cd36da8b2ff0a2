"""The local embedder: all-MiniLM-L6-v2 as the int8 model Orrery ships, on ONNX Runtime, offline; and
the float32 graph it is exported from, against the forward pass written out in NumPy."""

from __future__ import annotations

import math
import uuid

import numpy as np

from orrery.memory.embeddings import DIMENSIONS, MODEL_NAME, load_embedder


def test_bundled_model_embeds_like_sentence_transformers() -> None:
    embedder = load_embedder()
    assert embedder is not None and embedder.name == MODEL_NAME
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    # sentence-transformers gives 0.7553 for the first pair with this model
    assert abs(float(sims[0, 1]) - 0.7553) < 0.01
    assert sims[0, 1] > 0.5 > sims[0, 2]
    # batching and order do not change a text's vector
    alone = embedder.embed([texts[2]])[0]
    assert np.allclose(alone, vectors[2], atol=1e-5)


TEXTS = [
    "Short.",
    "A longer message about the launch plan, its owners and its open tasks. " * 6,
    "Über café 🚀",
]


def test_onnx_graph_computes_the_reference_forward_pass() -> None:
    """The float32 ONNX graph gives, in one padded batch, the vectors of BERT's forward pass written
    out in NumPy (the steps sentence-transformers runs), to float32 rounding."""
    from orrery.memory.minilm import MiniLM
    from orrery.memory.minilm_export import float32_model, float32_weights_dir

    directory = float32_weights_dir()
    assert directory is not None
    got = MiniLM(directory, model=float32_model(directory)).encode(TEXTS)
    want = np.stack([_reference(directory, text) for text in TEXTS])
    assert np.allclose(got, want, atol=2e-5)
    assert (got * want).sum(1).min() > 0.99999


def test_the_shipped_int8_model_is_the_float32_one_quantized() -> None:
    """The package data is what `minilm_export` writes from the published weights: the same tokenizer,
    the same vectors as a fresh export, within cosine 0.995 of the float32 graph's, and every product
    of the six layers (query-key-value, attention output, the feed-forward's two) in int8."""
    import onnx

    from orrery.memory.minilm import MODEL_FILE, MiniLM, weights_dir
    from orrery.memory.minilm_export import float32_model, float32_weights_dir

    shipped, published = weights_dir(), float32_weights_dir()
    assert shipped is not None and published is not None
    assert (shipped / "tokenizer.json").read_bytes() == (published / "tokenizer.json").read_bytes()
    int8 = MiniLM(shipped).encode(TEXTS)
    fresh = MiniLM(shipped, model=float32_model(published, int8=True)).encode(TEXTS)
    assert (fresh * int8).sum(1).min() > 0.9999  # on another CPU, float32 ranges may round apart
    float32 = MiniLM(published, model=float32_model(published)).encode(TEXTS)
    assert (int8 * float32).sum(1).min() > 0.995
    ops = [node.op_type for node in onnx.load(str(shipped / MODEL_FILE)).graph.node]
    assert ops.count("MatMulIntegerToFloat") == 4 * 6 and ops.count("MatMul") == 2 * 6  # attention's own


def _reference(directory: object, text: str) -> np.ndarray:
    from pathlib import Path

    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    w = load_file(str(Path(str(directory)) / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(Path(str(directory)) / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()  # tokenizer.json pads to 128; the reference sees the text alone
    ids = np.array(tokenizer.encode(text).ids)

    def norm(x: np.ndarray, name: str) -> np.ndarray:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x: np.ndarray, name: str) -> np.ndarray:
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        q, k, v = (
            linear(x, p + f"attention.self.{n}").reshape(len(ids), 12, 32).transpose(1, 0, 2)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(32)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        context = (weights / weights.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(len(ids), -1)
        x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        hidden = linear(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + np.vectorize(math.erf)(hidden / np.sqrt(2)))
        x = norm(linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_embedding_cpu_is_counted_on_metrics() -> None:
    """The model's CPU is counted apart from Orrery's own work, once per text it computes."""
    from orrery.ops.metrics import EMBEDDED_TEXTS, EMBEDDING_CPU

    embedder = load_embedder()
    assert embedder is not None
    once, other = f"a text counted once {uuid.uuid4()}", f"and another {uuid.uuid4()}"  # new here
    texts, seconds = EMBEDDED_TEXTS._value.get(), EMBEDDING_CPU._value.get()
    embedder.embed_once([once, once, other])
    assert EMBEDDED_TEXTS._value.get() == texts + 2  # the repeated text is embedded once
    assert EMBEDDING_CPU._value.get() > seconds
    embedder.embed_once([other])  # known: nothing computed, nothing counted
    assert EMBEDDED_TEXTS._value.get() == texts + 2


def test_known_texts_answer_without_the_model_and_a_new_one_answers_none() -> None:
    """`known`: the rows `embed_once` gives when every text was seen (no worker thread needed)."""
    embedder = load_embedder()
    assert embedder is not None
    seen, new = f"a text seen before {uuid.uuid4()}", f"a text never seen {uuid.uuid4()}"
    assert embedder.known([seen]) is None
    rows = embedder.embed_once([seen])
    known = embedder.known([seen, seen])
    assert known is not None and known.shape == (2, DIMENSIONS)
    assert np.array_equal(known[0], rows[0]) and np.array_equal(known[1], rows[0])
    assert embedder.known([seen, new]) is None and embedder.known([]) is None
