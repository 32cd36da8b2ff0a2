"""What the local embedding model costs: CPU ms to embed one new message, by its length in tokens,
and per text in a batch of 32 (an import's or a backfill's bulk write). Every message a turn stores
is embedded once, as it is written: a 20-token question and a 90-token reply are typical.

`python -m bench.embedding [--runs 30]`
"""

from __future__ import annotations

import argparse
import time

from orrery.memory.embeddings import load_embedder

SENTENCE = "the launch checklist has three open items left: the copy review, the analytics tags and the"
TOKENS = (8, 24, 64, 128, 256)


def _text(tokens: int, salt: int) -> str:
    """About `tokens` tokens of prose, made distinct by `salt` (nothing cached is measured)."""
    words = (f"note {salt} " + SENTENCE + " ") * (tokens // 10 + 1)
    return " ".join(words.split()[: max(tokens - 4, 1)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    main()
