"""build_context's arguments: a template's defaults under explicit ones, validated once for every door
(agent tool, MCP, HTTP API, CLI)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from orrery.errors import ValidationError
from orrery.graph.templates import ExcludeSpec, IncludeSpec, load_template
from orrery.repo.scope import as_uuid

DEFAULT_BUDGET = 4000
MIN_BUDGET = 1
"""Any positive budget is honoured: below a few dozen tokens the context is a cut header."""
STRATEGY_NAMES = ("relevance", "breadth", "depth", "semantic")
FORMATS = ("structured", "narrative", "outline")


@dataclass(frozen=True)
class BuildRequest:
    """Resolved arguments (template defaults applied)."""

    seeds: list[str]
    budget: int
    strategy: str
    include: IncludeSpec
    exclude: ExcludeSpec
    format: str
    template: str | None
    query: str | None
    existing_ids: frozenset[str]


def resolve_request(
    seeds: Sequence[str],
    *,
    budget: int | None = None,
    strategy: str | None = None,
    include: IncludeSpec | dict[str, Any] | None = None,
    exclude: ExcludeSpec | dict[str, Any] | None = None,
    format: str | None = None,
    template: str | None = None,
    query: str | None = None,
    existing_context: dict[str, Any] | None = None,
    additional_budget: int | None = None,
    templates_dir: Path | None = None,
) -> BuildRequest:
    """Merge explicit arguments over a template (shipped or from `templates_dir`) over the defaults,
    and validate them (seed ids included: a malformed one is a clear error before any query)."""
    tpl = load_template(template, templates_dir) if template else None
    strategy = strategy or (tpl.strategy if tpl else None) or "relevance"
    if strategy not in STRATEGY_NAMES:
        raise ValidationError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGY_NAMES)}")
    fmt = format or (tpl.format if tpl else None) or "structured"
    if fmt not in FORMATS:
        raise ValidationError(f"unknown format {fmt!r}; expected structured, narrative or outline")
    inc, exc = _specs(include, exclude, tpl.include if tpl else None, tpl.exclude if tpl else None)
    existing = _existing_ids(existing_context)
    total = additional_budget if existing_context is not None and additional_budget is not None else None
    total = total if total is not None else budget
    total = total if total is not None else (tpl.budget if tpl and tpl.budget else DEFAULT_BUDGET)
    if total < MIN_BUDGET:
        raise ValidationError(f"budget must be at least {MIN_BUDGET} token")
    if not seeds:
        raise ValidationError("build_context needs at least one seed entity id")
    for seed in seeds:
        as_uuid(seed, "entity")
    return BuildRequest(list(dict.fromkeys(seeds)), total, strategy, inc, exc, fmt, template, query, existing)


def _specs(
    include: IncludeSpec | dict[str, Any] | None,
    exclude: ExcludeSpec | dict[str, Any] | None,
    tpl_include: IncludeSpec | None,
    tpl_exclude: ExcludeSpec | None,
) -> tuple[IncludeSpec, ExcludeSpec]:
    """include/exclude from dicts (seed 003's names or ours) or models, else the template's."""
    try:
        inc = (
            IncludeSpec.model_validate(include)
            if isinstance(include, dict)
            else include or tpl_include or IncludeSpec()
        )
        exc = (
            ExcludeSpec.model_validate(exclude)
            if isinstance(exclude, dict)
            else exclude or tpl_exclude or ExcludeSpec()
        )
    except PydanticValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValidationError(f"invalid include/exclude: {problems}") from None
    return inc, exc


def _existing_ids(existing: dict[str, Any] | None) -> frozenset[str]:
    """Ids already sent: the previous response's primary/related nodes (top level or in seed 003's
    `context` wrapper) and `metadata.seen_ids`."""
    if not existing:
        return frozenset()
    try:
        parts = [existing, existing.get("context") or {}]
        ids = {str(p["node"]["id"]) for part in parts for p in part.get("primary", [])} | {
            str(r["node"]["id"]) for part in parts for r in part.get("related", [])
        }
        return frozenset(ids) | frozenset(str(i) for i in existing.get("metadata", {}).get("seen_ids", []))
    except (KeyError, TypeError, AttributeError):
        raise ValidationError(
            "existing_context must be an earlier build_context response "
            "(primary/related items with node.id, metadata.seen_ids)"
        ) from None
