"""Turn a docs folder into chunks: user stories (PRD markdown), endpoints (OpenAPI), DB models
(Prisma, SQL DDL, SQLAlchemy) and validation schemas (pydantic, zod), linked by keyword overlap.

Pure functions over files: nothing here touches the database.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from backend.errors import ValidationError
from backend.text import stem, tokenize

SNIPPET_CHARS = 1200
MAX_FILE_BYTES = 2_000_000
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_STORY = re.compile(r"^#{2,4}\s+(US-\d{1,4})\s*[:\-—]\s*(.+?)\s*$")
_EPIC = re.compile(r"^##\s+(?:Epic:\s*)?(.+?)\s*$")
_PRIORITY = re.compile(r"\*\*Priority:\*\*\s*(P\d)", re.I)
_CRITERIA = re.compile(r"^\*{0,2}(?:#+\s*)?Acceptance Criteria:?\*{0,2}:?\s*$", re.I)
_PRISMA_MODEL = re.compile(r"^model\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_SQL_TABLE = re.compile(
    r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[`\"]?(\w+)[`\"]?\s*\((.*?)\)\s*;", re.I | re.S
)
_ZOD = re.compile(r"(?:export\s+)?const\s+(\w+)\s*=\s*z\.object\(\{(.*?)\}\)", re.S)


@dataclass
class Chunk:
    """One indexed piece of documentation."""

    kind: str
    key: str
    title: str
    content: str
    source_path: str
    epic: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    keywords: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def keywords_of(text: str, limit: int = 12) -> list[str]:
    """The most frequent meaningful words of a text (stemmed for matching, shown as written)."""
    counts = Counter(w for w in tokenize(text) if len(w) > 2 and not w.isdigit())
    return [w for w, _ in counts.most_common(limit)]


def _split_identifier(name: str) -> list[str]:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("/", " ").replace("-", " ")
    return [w.lower() for w in words.split() if w and not w.startswith("{")]


def parse_prd(text: str, source: str) -> list[Chunk]:
    """User stories from PRD markdown: `### US-001: Title` under `## Epic: Name` headings."""
    stories: list[Chunk] = []
    epic: str | None = None
    current: Chunk | None = None
    in_criteria = False
    for line in text.splitlines():
        story = _STORY.match(line)
        if story:
            current = Chunk(
                "story", story.group(1), story.group(2), "", source, epic, {"acceptance_criteria": []}
            )
            stories.append(current)
            in_criteria = False
            continue
        heading = _EPIC.match(line)
        if heading and not line.startswith("###"):
            epic, current = heading.group(1), None
            continue
        if current is None:
            continue
        if _CRITERIA.match(line.strip()):
            in_criteria = True
        elif (priority := _PRIORITY.search(line)) is not None:
            current.data["priority"] = priority.group(1).upper()
        elif in_criteria and line.strip().startswith(("-", "*")):
            current.data["acceptance_criteria"].append(line.strip().lstrip("-* ").strip())
        elif line.strip():
            current.content = f"{current.content} {line.strip()}".strip()
    for s in stories:
        s.keywords = keywords_of(f"{s.title} {s.title} {s.content} {' '.join(s.data['acceptance_criteria'])}")
    return stories


def parse_openapi(text: str, source: str) -> list[Chunk]:
    """Endpoints from an OpenAPI document (YAML or JSON)."""
    spec = yaml.safe_load(text)
    if not isinstance(spec, dict) or "paths" not in spec:
        return []
    chunks = []
    for path, operations in (spec.get("paths") or {}).items():
        for method, op in (operations or {}).items():
            if method not in HTTP_METHODS or not isinstance(op, dict):
                continue
            refs = re.findall(r"#/components/schemas/(\w+)", yaml.safe_dump(op))
            snippet = yaml.safe_dump({path: {method: op}}, sort_keys=False)[:SNIPPET_CHARS]
            summary = str(op.get("summary", ""))
            chunk = Chunk(
                "endpoint",
                f"{method.upper()} {path}",
                summary or f"{method.upper()} {path}",
                snippet,
                source,
                data={
                    "method": method.upper(),
                    "path": path,
                    "operation_id": op.get("operationId"),
                    "schemas": refs,
                    "tags": op.get("tags", []),
                },
            )
            chunk.keywords = list(
                dict.fromkeys(
                    _split_identifier(path)
                    + _split_identifier(str(op.get("operationId", "")))
                    + keywords_of(summary)
                )
            )
            chunks.append(chunk)
    return chunks


def _model(name: str, fields: list[str], snippet: str, source: str) -> Chunk:
    return Chunk(
        "model",
        name,
        name,
        snippet[:SNIPPET_CHARS],
        source,
        data={"fields": fields},
        keywords=list(dict.fromkeys(_split_identifier(name) + [f.lower() for f in fields])),
    )


def parse_prisma(text: str, source: str) -> list[Chunk]:
    """DB models from a Prisma schema."""
    out = []
    for match in _PRISMA_MODEL.finditer(text):
        fields = [
            line.split()[0]
            for line in match.group(2).splitlines()
            if line.strip() and not line.strip().startswith(("//", "@@"))
        ]
        out.append(_model(match.group(1), fields, match.group(0), source))
    return out


def parse_sql(text: str, source: str) -> list[Chunk]:
    """DB models from SQL `CREATE TABLE` statements."""
    out = []
    for match in _SQL_TABLE.finditer(text):
        fields = [
            part.strip().split()[0].strip('`"')
            for part in match.group(2).split(",")
            if part.strip()
            and part.strip().split()[0].upper()
            not in ("PRIMARY", "FOREIGN", "UNIQUE", "CONSTRAINT", "CHECK", "KEY", "INDEX")
        ]
        out.append(_model(match.group(1), fields, match.group(0), source))
    return out


def _base_names(node: ast.ClassDef) -> list[str]:
    return [
        b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
        for b in node.bases
    ]


def parse_python(text: str, source: str) -> list[Chunk]:
    """SQLAlchemy models (classes with `__tablename__`) and pydantic schemas (BaseModel subclasses)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = [
            t.target.id for t in node.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)
        ]
        fields += [
            t.targets[0].id
            for t in node.body
            if isinstance(t, ast.Assign)
            and isinstance(t.targets[0], ast.Name)
            and t.targets[0].id != "__tablename__"
            and "Column(" in ast.unparse(t.value)
        ]
        snippet = ast.get_source_segment(text, node) or node.name
        is_table = any(
            isinstance(t, ast.Assign)
            and any(isinstance(x, ast.Name) and x.id == "__tablename__" for x in t.targets)
            for t in node.body
        )
        if is_table:
            out.append(_model(node.name, fields, snippet, source))
        elif "BaseModel" in _base_names(node):
            out.append(
                Chunk(
                    "schema",
                    node.name,
                    node.name,
                    snippet[:SNIPPET_CHARS],
                    source,
                    data={"fields": fields, "library": "pydantic"},
                    keywords=list(dict.fromkeys(_split_identifier(node.name) + [f.lower() for f in fields])),
                )
            )
    return out


def parse_zod(text: str, source: str) -> list[Chunk]:
    """Validation schemas from zod `z.object({...})` declarations."""
    out = []
    for match in _ZOD.finditer(text):
        fields = re.findall(r"^\s*(\w+)\s*:", match.group(2), re.M)
        out.append(
            Chunk(
                "schema",
                match.group(1),
                match.group(1),
                match.group(0)[:SNIPPET_CHARS],
                source,
                data={"fields": fields, "library": "zod"},
                keywords=list(dict.fromkeys(_split_identifier(match.group(1)) + [f.lower() for f in fields])),
            )
        )
    return out


def _parse(path: Path, root: Path) -> list[Chunk]:
    text = path.read_text(encoding="utf-8", errors="replace")
    source = str(path.relative_to(root))
    suffix = path.suffix.lower()
    if suffix == ".md":
        return parse_prd(text, source)
    if suffix in (".yaml", ".yml", ".json") and re.search(r'"?openapi"?\s*:', text):
        return parse_openapi(text, source)
    if suffix == ".prisma":
        return parse_prisma(text, source)
    if suffix == ".sql":
        return parse_sql(text, source)
    if suffix == ".py":
        return parse_python(text, source)
    if suffix in (".ts", ".js"):
        return parse_zod(text, source)
    return []


def doc_files(root: Path) -> list[Path]:
    """The files the chunker reads, in a stable order (hidden folders and node_modules skipped).

    A symlink is followed only when its target stays inside the folder: a link to `/etc/passwd` or
    to another project's docs is skipped."""
    if not root.is_dir():
        raise ValidationError(f"docs path {str(root)!r} is not a directory")
    inside = root.resolve()
    files = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.resolve().is_relative_to(inside)
        and p.stat().st_size <= MAX_FILE_BYTES
        and not any(part.startswith(".") or part == "node_modules" for part in p.relative_to(root).parts)
        and p.suffix.lower() in (".md", ".yaml", ".yml", ".json", ".prisma", ".sql", ".py", ".ts", ".js")
    ]
    return sorted(files)


def content_hash(files: Iterable[Path]) -> str:
    """One hash over every file's path and bytes (unchanged docs need no re-index)."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f).encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


def _stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words if len(w) > 2}


def link_chunks(chunks: list[Chunk]) -> None:
    """Link stories to endpoints, models and schemas sharing keywords, and specs back to stories."""
    stories = [c for c in chunks if c.kind == "story"]
    specs = [c for c in chunks if c.kind != "story"]
    schema_keys = {c.key: c for c in specs if c.kind == "schema"}
    for spec in specs:
        if spec.kind == "endpoint":  # endpoint -> schemas it references (Foo -> Foo or FooSchema)
            for ref in spec.data.get("schemas", []):
                for key in (ref, f"{ref}Schema"):
                    if key in schema_keys and key not in spec.links:
                        spec.links.append(key)
                        schema_keys[key].links.append(spec.key)
    for story in stories:
        words = _stems(story.keywords)
        for spec in specs:
            overlap = words & _stems(spec.keywords)
            name_hit = spec.kind == "model" and stem(spec.key.lower()) in words
            if name_hit or len(overlap) >= 2:
                story.links.append(spec.key)
                spec.links.append(story.key)


def chunk_folder(root: Path) -> tuple[list[Chunk], str]:
    """Every chunk of a docs folder, linked, plus the folder's content hash."""
    files = doc_files(root)
    chunks = [c for f in files for c in _parse(f, root)]
    seen: set[tuple[str, str]] = set()
    unique = []
    for c in chunks:  # first definition wins (e.g. a schema declared twice)
        if (c.kind, c.key) not in seen:
            seen.add((c.kind, c.key))
            unique.append(c)
    link_chunks(unique)
    return unique, content_hash(files)
