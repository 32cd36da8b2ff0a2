"""Seed 004's shapes for story context and specs, and how a story context reads in a prompt.

Both indexed rows (`DocChunk`) and freshly parsed chunks (`Chunk`) have the same attributes, so the
database reads and the reduction bench (`orrery.docs.reduction`) shape them with the same code.
Snippets are the source text, verbatim: in the tool's text they sit in fenced blocks (a fence longer
than any backtick run inside, invisible characters removed, a `<` that would open a tag shown as `‹`),
so code reads as written and stays data. Story prose and labels go through `inline_data`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol

from orrery.text import inline_data


class ChunkLike(Protocol):
    """A `Chunk` or a `DocChunk` row."""

    kind: str
    key: str
    title: str
    content: str
    source_path: str
    epic: str | None
    data: Any
    keywords: Any
    links: Any


_SNIPPET_KEY = {"prisma": "prisma_snippet"}
SHOWN_KEYWORDS = 8
"""A story's most frequent words, enough to search with; all 12 are kept for linking."""
_TAG_OPENER = re.compile(r"(?<![\w$.])<(?=/?[A-Za-z!])|<(?=/[A-Za-z])")
"""A `<` that could open a tag (`<system>`, any `</...`), but not a generic's `Array<string>`."""


def story_dict(c: ChunkLike) -> dict[str, Any]:
    """Seed 004's `story`, plus its priority and inferred agents."""
    return {
        "id": c.key,
        "title": c.title,
        "content": c.content,
        "acceptance_criteria": list(c.data.get("acceptance_criteria", [])),
        "epic": c.epic,
        "keywords": list(c.keywords)[:SHOWN_KEYWORDS],
        "priority": c.data.get("priority"),
        "agents": list(c.data.get("agents", [])),
    }


def story_summary(c: ChunkLike) -> dict[str, Any]:
    """A related story: enough to decide whether to ask for it."""
    return {"id": c.key, "title": c.title, "epic": c.epic, "priority": c.data.get("priority")}


def spec_dict(c: ChunkLike) -> dict[str, Any]:
    """An endpoint, model or schema in seed 004's keys; the snippet is its source, verbatim."""
    language = c.data.get("language")
    if c.kind == "endpoint":
        return {
            "endpoint": c.data.get("path"),
            "method": c.data.get("method"),
            "operationId": c.data.get("operation_id"),
            "language": language,
            "openapi_snippet": c.content,
        }
    if c.kind == "model":
        return {
            "model_name": c.key,
            "fields": list(c.data.get("fields", [])),
            "language": language,
            _SNIPPET_KEY.get(
                str(language), "prisma_snippet" if language is None else f"{language}_snippet"
            ): (c.content),
        }
    return {
        "schema_name": c.key,
        "fields": list(c.data.get("fields", [])),
        "file": c.source_path,
        "library": c.data.get("library"),
        "schema_snippet": c.content,
    }


def related_keys(story: ChunkLike, linked: Sequence[ChunkLike]) -> set[str]:
    """Stories that share one of this story's endpoints (besides its epic, which the query adds).
    A shared model is no tie: models are what most stories of a product touch."""
    return {k for c in linked if c.kind == "endpoint" for k in c.links if k != story.key}


def story_context(
    story: ChunkLike, linked: Sequence[ChunkLike], related: Sequence[ChunkLike] | None
) -> dict[str, Any]:
    """Seed 004's `get_context_for_story` result."""
    return {
        "story": story_dict(story),
        "api_specs": [spec_dict(c) for c in linked if c.kind == "endpoint"],
        "db_models": [spec_dict(c) for c in linked if c.kind == "model"],
        "zod_schemas": [spec_dict(c) for c in linked if c.kind == "schema"],
        "related_stories": [story_summary(r) for r in related or []],
    }


def fenced(text: str, language: str = "") -> str:
    """A code snippet as a fenced block nothing inside can close or turn into a tag: verbatim, but data."""
    clean = "".join(
        ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs")
    )
    clean = _TAG_OPENER.sub("‹", clean)
    longest = max((len(run) for run in re.findall(r"`+|~+", clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{re.sub(r'[^a-z0-9+-]', '', language.lower())}\n{clean.rstrip()}\n{fence}"


def _q(value: Any) -> str:
    return inline_data(str(value)) if value is not None else "-"


def _spec_parts(spec: dict[str, Any]) -> list[str]:
    """A spec's heading and its snippet verbatim in a fence (as in a story context)."""
    if "endpoint" in spec:
        return [
            f"## API {_q(spec['method'])} {_q(spec['endpoint'])} · operationId {_q(spec['operationId'])}",
            fenced(spec["openapi_snippet"], spec["language"] or "yaml"),
        ]
    if "model_name" in spec:
        snippet = next(v for k, v in spec.items() if k.endswith("_snippet"))
        return [f"## Model {_q(spec['model_name'])}", fenced(snippet, spec["language"] or "")]
    return [f"## Schema {_q(spec['schema_name'])}", fenced(spec["schema_snippet"], "typescript")]


def render_specs(result: dict[str, Any]) -> str:
    """`get_relevant_specs` as the tool's text: each spec's snippet verbatim in a fence, and the
    identifiers not found, as asked."""
    parts = [f"# Specs ({_q(result['spec_type'])}): {len(result['specs'])} found"]
    for spec in result["specs"]:
        parts += _spec_parts(spec)
    if result["not_found"]:
        parts.append(f"Not found: {', '.join(_q(i) for i in result['not_found'])}")
    return "\n\n".join(parts)


def render_story_context(ctx: dict[str, Any]) -> str:
    """The tool's text: the story's prose quoted with `inline_data`, snippets verbatim in fences."""
    s = ctx["story"]
    parts = [
        f"# Story {_q(s['id'])}: {_q(s['title'])}",
        f"Epic: {_q(s['epic'])} · Priority: {_q(s['priority'])} · Agents: {', '.join(s['agents']) or '-'}",
        f"Keywords: {_q(', '.join(s['keywords']))}",
        inline_data(s["content"], keep_lines=True),
        "## Acceptance criteria",
        "\n".join(f"- {inline_data(a)}" for a in s["acceptance_criteria"]) or "(none)",
    ]
    for spec in [*ctx["api_specs"], *ctx["db_models"], *ctx["zod_schemas"]]:
        parts += _spec_parts(spec)
    if ctx["related_stories"]:
        related = "; ".join(f"{_q(r['id'])} {_q(r['title'])}" for r in ctx["related_stories"])
        parts.append(f"Related stories: {related}")
    return "\n\n".join(parts)
