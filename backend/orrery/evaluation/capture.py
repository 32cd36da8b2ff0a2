"""`orrery eval capture`: precision and recall of capturing standing instructions and preferences,
on a frozen labelled set of sentences (`data/capture_set.json`) with many hard negatives.

A capture counts as right only with the right kind; a capture of a sentence labelled `none` is a
false one (what costs trust). Runs with the local embedder, or lexical only (`lexical=True`, what a
server without the embedder does). Also reports the CPU one capture decision costs.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from orrery.memory.embeddings import load_embedder
from orrery.memory.standing import detect

CAPTURE_SET = Path(__file__).parent / "data" / "capture_set.json"
KINDS = ("instruction", "preference")


def load_set(path: Path | None = None) -> list[dict[str, Any]]:
    """The labelled sentences: `text`, `label` (`instruction`, `preference` or `none`), `category`."""
    items: list[dict[str, Any]] = json.loads((path or CAPTURE_SET).read_text(encoding="utf-8"))["items"]
    return items


def run_capture_eval(path: Path | None = None, *, lexical: bool = False) -> dict[str, Any]:
    """Per kind: precision, recall, counts; overall precision; misses and false captures by text."""
    embedder = None if lexical else load_embedder()
    items = load_set(path)
    found: list[str] = []
    cpu: list[float] = []
    for item in items:
        started = time.thread_time()
        standing = detect(item["text"], embedder)
        cpu.append(time.thread_time() - started)
        found.append(standing.kind if standing else "none")
    kinds = {kind: _kind_score(items, found, kind) for kind in KINDS}
    captured = [(i, f) for i, f in zip(items, found, strict=True) if f != "none"]
    right = sum(1 for i, f in captured if i["label"] == f)
    standing_items = sum(1 for i in items if i["label"] != "none")
    return {
        "embedder": "none (lexical)" if embedder is None else embedder.name,
        "sentences": len(items),
        "kinds": kinds,
        "overall": {
            "precision": right / len(captured) if captured else None,
            "recall": right / standing_items if standing_items else None,
            "captured": len(captured),
            "correct": right,
        },
        "by_category": _categories(items, found),
        "false_captures": [
            {"text": i["text"], "as": f, "category": i["category"]} for i, f in captured if i["label"] != f
        ],
        "missed": [
            i["text"] for i, f in zip(items, found, strict=True) if i["label"] != "none" and f == "none"
        ],
        "cpu_ms_median": 1000 * statistics.median(cpu) if cpu else 0.0,
    }


def _kind_score(items: list[dict[str, Any]], found: list[str], kind: str) -> dict[str, Any]:
    tp = sum(1 for i, f in zip(items, found, strict=True) if f == kind and i["label"] == kind)
    fp = sum(1 for i, f in zip(items, found, strict=True) if f == kind and i["label"] != kind)
    fn = sum(1 for i, f in zip(items, found, strict=True) if f != kind and i["label"] == kind)
    return {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "true": tp,
        "false": fp,
        "missed": fn,
    }


def _categories(items: list[dict[str, Any]], found: list[str]) -> dict[str, dict[str, int]]:
    """Per category: sentences and how many were captured (for negatives, each one is wrong)."""
    out: dict[str, dict[str, int]] = {}
    for item, f in zip(items, found, strict=True):
        row = out.setdefault(item["category"], {"sentences": 0, "captured": 0})
        row["sentences"] += 1
        row["captured"] += f != "none"
    return out
