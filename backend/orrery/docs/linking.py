"""Link stories to the specs they need, and infer which agents a story is for (seed 004).

Evidence comes in order of strength:
1. Explicit: a story that names an endpoint (`POST /v1/orders`, or just its path) links to it, and a
   spec whose text names a story id links to that story.
2. Resources: an endpoint links to the model its path acts on (`/v1/orders/{id}/cancel` -> `Order`);
   a story linked to an endpoint gets that endpoint's models and schemas.
3. A model named in the story's title, or by its exact name (case and all) anywhere in the story,
   as a word or in backticks ("stored in the `Session` table", "`Invoice` and `LineItem`").
4. Keyword overlap, only where no story names an endpoint (a team that references its endpoints in
   stories has said which ones each story needs; guessing beside that only adds noise): two shared
   keywords, counting only words that tell stories apart (a word in more than half of the stories says
   nothing about which spec a story needs), or a model named among the story's keywords.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from orrery.docs.chunk import Chunk, split_identifier
from orrery.text import stem, tokenize

_PATH = re.compile(r"(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?(/[A-Za-z0-9_{}\-./:]*[A-Za-z0-9_}])")
_STORY_ID = re.compile(r"\bUS-\d{1,4}\b")
_VERSION = re.compile(r"^v\d+$")
FRONTEND_WORDS = frozenset(
    stem(w)
    for w in [
        "page",
        "form",
        "screen",
        "button",
        "click",
        "display",
        "dashboard",
        "filter",
        "sort",
        "tab",
        "menu",
        "modal",
        "picker",
        "calculator",
        "ui",
        "layout",
        "browser",
        "mobile",
        "label",
        "shown",
        "shows",
        "highlighted",
        "flagged",
        "colour",
        "color",
        "see",
        "sees",
        "open",
        "opens",
        "upload",
        "download",
    ]
)
BACKEND_WORDS = frozenset(
    stem(w)
    for w in [
        "api",
        "endpoint",
        "webhook",
        "database",
        "sync",
        "synced",
        "integration",
        "job",
        "queue",
        "background",
        "export",
        "stored",
        "persisted",
        "idempotent",
        "event",
        "events",
        "scan",
        "signature",
        "retry",
    ]
)
AGENTS = ("frontend-developer", "backend-developer", "qa-engineer")


def _stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words if len(w) > 2}


def _link(a: Chunk, b: Chunk) -> None:
    if b.key not in a.links:
        a.links.append(b.key)
    if a.key not in b.links:
        b.links.append(a.key)


def normal_path(path: str) -> str:
    """`/v1/Orders/{orderId}/` -> `/v1/orders/{}`: how paths are compared."""
    return re.sub(r"\{[^}]*\}", "{}", path.strip().rstrip("/.,;:)")).lower()


def _story_text(story: Chunk) -> str:
    return f"{story.title}\n{story.content}\n" + "\n".join(
        map(str, story.data.get("acceptance_criteria", []))
    )


def _named_endpoints(story: Chunk, endpoints: list[Chunk]) -> list[Chunk]:
    """Endpoints the story names by `METHOD /path` or by path alone."""
    by_path: dict[str, list[Chunk]] = {}
    for e in endpoints:
        by_path.setdefault(normal_path(str(e.data.get("path", ""))), []).append(e)
    found: list[Chunk] = []
    for method, path in _PATH.findall(_story_text(story)):
        for e in by_path.get(normal_path(path), []):
            if (not method or e.data.get("method") == method.upper()) and e not in found:
                found.append(e)
    return found


def _named_models(story: Chunk, models: list[Chunk]) -> list[Chunk]:
    """Models whose exact name (`Session`, `LineItem`) stands as a word in the story's text."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _story_text(story)))
    return [m for m in models if m.key in words]


def _resource_models(endpoint: Chunk, models: list[Chunk]) -> list[Chunk]:
    """The model an endpoint's path acts on: its last path segment that names one."""
    names = {tuple(stem(w) for w in split_identifier(m.key)): m for m in models}
    segments = [
        s
        for s in str(endpoint.data.get("path", "")).split("/")
        if s and "{" not in s and not _VERSION.match(s)
    ]
    for segment in reversed(segments):
        model = names.get(tuple(stem(w) for w in split_identifier(segment)))
        if model is not None:
            return [model]
    return []


def link_chunks(chunks: list[Chunk]) -> None:
    """Link stories and specs (see the module docstring), then infer each story's agents."""
    stories = [c for c in chunks if c.kind == "story"]
    specs = [c for c in chunks if c.kind != "story"]
    endpoints = [c for c in specs if c.kind == "endpoint"]
    models = [c for c in specs if c.kind == "model"]
    schema_keys = {c.key: c for c in specs if c.kind == "schema"}
    for spec in endpoints:  # endpoint -> schemas it references (Foo -> Foo or FooSchema), its model
        for ref in spec.data.get("schemas", []):
            for key in (ref, f"{ref}Schema"):
                if key in schema_keys:
                    _link(spec, schema_keys[key])
        for model in _resource_models(spec, models):
            _link(spec, model)
    by_key = {c.key: c for c in chunks}
    story_keys = {s.key for s in stories}
    for spec in specs:  # a spec that names a story
        for key in set(_STORY_ID.findall(spec.content)) & story_keys:
            _link(by_key[key], spec)
    document_frequency = Counter(w for s in stories for w in _stems(s.keywords))
    common = {w for w, n in document_frequency.items() if n > len(stories) / 2}
    named_by = {s.key: _named_endpoints(s, endpoints) for s in stories}
    guess = not any(named_by.values())
    for story in stories:
        named = named_by[story.key]
        for endpoint in named:
            _link(story, endpoint)
            for key in list(endpoint.links):
                if by_key.get(key) is not None and by_key[key].kind in ("model", "schema"):
                    _link(story, by_key[key])
        for model in _named_models(story, models):
            _link(story, model)
        title = _stems(tokenize(story.title))
        words = _stems(story.keywords) - common
        for spec in specs:
            name = stem(spec.key.lower())
            named_model = spec.kind == "model" and (name in title or (guess and name in words))
            if named_model or (guess and len(words & (_stems(spec.keywords) - common)) >= 2):
                _link(story, spec)
        story.data["agents"] = infer_agents(story, [by_key[k] for k in story.links if k in by_key])


def infer_agents(story: Chunk, linked: list[Chunk]) -> list[str]:
    """Who works on a story (seed 004's roles). Backend: it needs an endpoint, model or schema, or its
    text names server-side work; frontend: its text names a user interface; a story that names neither
    needs both. QA: every story with acceptance criteria (they are what QA tests)."""
    words = _stems(tokenize(_story_text(story)))
    backend = bool(linked) or bool(words & BACKEND_WORDS)
    frontend = bool(words & FRONTEND_WORDS)
    if not backend and not frontend:
        backend = frontend = True
    chosen = [frontend, backend, bool(story.data.get("acceptance_criteria"))]
    return [agent for agent, yes in zip(AGENTS, chosen, strict=True) if yes]
