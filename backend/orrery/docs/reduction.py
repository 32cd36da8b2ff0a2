"""How much smaller story context is than the whole documents (seed 004: ~90%, 95% without related
stories): measured on a docs folder by the same chunker and story shapes the index serves."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from orrery.docs.chunker import chunk_folder, doc_files
from orrery.docs.story import related_keys, render_story_context, story_context
from orrery.tokens import TokenCounter


@dataclass(frozen=True)
class Reduction:
    """Story context against the whole documents, in tokens (means over every story)."""

    stories: int
    whole_tokens: int
    mean_json_tokens: float
    mean_text_tokens: float
    reduction_json: float
    """1 - JSON story context / whole documents (the API and CLI answer), with related stories."""
    reduction_text: float
    """The same for the tool's text (what an agent reads)."""
    reduction_without_related: float
    """The JSON answer without related stories."""
    worst_json: float
    """The smallest reduction of any one story (JSON, with related stories)."""
    linked_specs: int
    """Specs linked to stories in all (0 would make any reduction meaningless)."""


def measure(root: Path, counter: TokenCounter) -> Reduction:
    """Chunk `root` and compare each story's context with every file of the folder together."""
    chunks, _ = chunk_folder(root)
    whole = sum(counter.count(p.read_text(encoding="utf-8", errors="replace")) for p in doc_files(root))
    by_key = {c.key: c for c in chunks}
    stories = [c for c in chunks if c.kind == "story"]
    if not stories or not whole:
        return Reduction(0, whole, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
    json_sizes, text_sizes, bare_sizes = [], [], []
    linked_total = 0
    for story in stories:
        linked = [by_key[k] for k in story.links if k in by_key and by_key[k].kind != "story"]
        linked_total += len(linked)
        shared = related_keys(story, linked)
        related = [s for s in stories if s.key != story.key and (s.key in shared or s.epic == story.epic)]
        full = story_context(story, linked, related)
        json_sizes.append(counter.count(json.dumps(full, ensure_ascii=False)))
        text_sizes.append(counter.count(render_story_context(full)))
        bare_sizes.append(counter.count(json.dumps(story_context(story, linked, None), ensure_ascii=False)))
    n = len(stories)
    return Reduction(
        stories=n,
        whole_tokens=whole,
        mean_json_tokens=sum(json_sizes) / n,
        mean_text_tokens=sum(text_sizes) / n,
        reduction_json=1 - sum(json_sizes) / n / whole,
        reduction_text=1 - sum(text_sizes) / n / whole,
        reduction_without_related=1 - sum(bare_sizes) / n / whole,
        worst_json=1 - max(json_sizes) / whole,
        linked_specs=linked_total,
    )
