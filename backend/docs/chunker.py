"""Turn a docs folder into chunks: user stories (PRD markdown), endpoints (OpenAPI), DB models
(Prisma, SQL DDL, SQLAlchemy) and validation schemas (pydantic, zod), linked by keyword overlap.

Pure functions over files: nothing here touches the database.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

import yaml

from backend.docs.chunk import SNIPPET_CHARS, Chunk, keywords_of, model_chunk, schema_chunk, split_identifier
from backend.docs.prd import parse_prd
from backend.docs.schemas import parse_sql, parse_zod
from backend.errors import ValidationError
from backend.text import stem

__all__ = [
    "Chunk",
    "chunk_folder",
    "parse_openapi",
    "parse_prd",
    "parse_prisma",
    "parse_python",
    "parse_sql",
    "parse_zod",
]

MAX_FILE_BYTES = 2_000_000
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_PRISMA_MODEL = re.compile(r"^model\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)


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
                    split_identifier(path)
                    + split_identifier(str(op.get("operationId", "")))
                    + keywords_of(summary)
                )
            )
            chunks.append(chunk)
    return chunks


def parse_prisma(text: str, source: str) -> list[Chunk]:
    """DB models from a Prisma schema."""
    out = []
    for match in _PRISMA_MODEL.finditer(text):
        fields = [
            line.split()[0]
            for line in match.group(2).splitlines()
            if line.strip() and not line.strip().startswith(("//", "@@"))
        ]
        out.append(model_chunk(match.group(1), fields, match.group(0), source))
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
            out.append(model_chunk(node.name, fields, snippet, source))
        elif "BaseModel" in _base_names(node):
            out.append(schema_chunk(node.name, fields, snippet, source, "pydantic"))
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
