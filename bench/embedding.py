"""What the local embedding model costs: CPU ms to embed one new message, by its length in tokens,
and per text in a batch of 32 (an import's or a backfill's bulk write). Every message a turn stores
is embedded once, as it is written: a 20-token question and a 90-token reply are typical.

`python -m bench.embedding [--runs 30] [--against OTHER.onnx]`

`--against` times another model file (say the one before a change: `git show
HEAD~1:backend/orrery/memory/model/minilm-int8.onnx > /tmp/before.onnx`) in the same process, one
message each in turn, so a slow minute hits both alike; its columns are the median CPU ms of one
message for each model, and how close its vectors are to the shipped model's (cosine, lowest).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from orrery.memory.embeddings import load_embedder
from orrery.memory.minilm import MiniLM, weights_dir

SENTENCE = "the launch checklist has three open items left: the copy review, the analytics tags and the"
TOKENS = (8, 24, 64, 128, 256)


def _text(tokens: int, salt: int) -> str:
    """About `tokens` tokens of prose, made distinct by `salt` (nothing cached is measured)."""
    words = (f"note {salt} " + SENTENCE + " ") * (tokens // 10 + 1)
    return " ".join(words.split()[: max(tokens - 4, 1)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--against", type=Path, help="another model file, timed in turn with it")
    args = parser.parse_args(argv)
    if args.against is not None:
        _against(args.against, args.runs)
        return
    embedder = load_embedder()
    if embedder is None:
        raise SystemExit("the shipped embedding model is missing (orrery/memory/model/)")
    print("| tokens | one message, CPU ms | in a batch of 32, CPU ms a text |\n|---:|---:|---:|")
    for tokens in TOKENS:
        embedder.embed([_text(tokens, -1)])  # warm: the session's buffers for this length
        started = time.process_time()
        for run in range(args.runs):
            embedder.embed([_text(tokens, run)])
        one = (time.process_time() - started) * 1000 / args.runs
        batch = [_text(tokens, run) for run in range(32)]
        started = time.process_time()
        embedder.embed(batch)
        print(f"| {tokens} | {one:.1f} | {(time.process_time() - started) * 1000 / 32:.1f} |")


def _against(other: Path, runs: int) -> None:
    """The shipped model and `other`, one message each in turn (the order flipped every run)."""
    import numpy as np

    directory = weights_dir()
    if directory is None:
        raise SystemExit("the shipped embedding model is missing (orrery/memory/model/)")
    models = {"shipped": MiniLM(directory), other.name: MiniLM(directory, model=other.read_bytes())}
    print(f"| tokens | shipped, CPU ms | {other.name}, CPU ms | shipped / other | cosine, lowest |")
    print("|---:|---:|---:|---:|---:|")
    for tokens in TOKENS:
        texts = [_text(tokens, run) for run in range(runs)]
        spent: dict[str, list[float]] = {name: [] for name in models}
        for run, text in enumerate(texts):
            for name in list(models)[:: 1 if run % 2 else -1]:
                started = time.process_time()
                models[name].encode([text])
                spent[name].append(time.process_time() - started)
        shipped, theirs = (statistics.median(spent[name]) * 1000 for name in models)
        cosine = float(np.min((models["shipped"].encode(texts) * models[other.name].encode(texts)).sum(1)))
        print(f"| {tokens} | {shipped:.2f} | {theirs:.2f} | {shipped / theirs:.2f} | {cosine:.4f} |")


if __name__ == "__main__":
    main()
