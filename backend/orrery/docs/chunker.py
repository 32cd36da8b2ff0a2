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

from orrery.docs.chunk import SNIPPET_CHARS, Chunk, keywords_of, model_chunk, schema_chunk, split_identifier
from orrery.docs.linking import link_chunks
from orrery.docs.prd import FenceParser, parse_prd
from orrery.docs.schemas import parse_sql, parse_zod
from orrery.errors import ValidationError

__all__ = [
    "Chunk",
    "chunk_folder",
    "parse_openapi",
    "parse_prd",
    "parse_prisma",
    "parse_python",
    "parse_sql",
    "parse_zod",
    "link_chunks",
]

MAX_FILE_BYTES = 2_000_000
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_PRISMA_MODEL = re.compile(r"^model\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)


def parse_openapi(text: str, source: str) -> list[Chunk]:
    """Endpoints from an OpenAPI document (YAML or JSON); each snippet is the operation's own source
    text, verbatim (its path line, then the method block as written)."""
    spec = yaml.safe_load(text)
    if not isinstance(spec, dict) or "paths" not in spec:
        return []
    spans = _operation_spans(text)
    chunks = []
    for path, operations in (spec.get("paths") or {}).items():
        for method, op in (operations or {}).items():
            if method not in HTTP_METHODS or not isinstance(op, dict):
                continue
            refs = re.findall(r"#/components/schemas/(\w+)", yaml.safe_dump(op))
            snippet = spans.get((str(path), method)) or yaml.safe_dump({path: {method: op}}, sort_keys=False)
            summary = str(op.get("summary", ""))
            chunk = Chunk(
                "endpoint",
                f"{method.upper()} {path}",
                summary or f"{method.upper()} {path}",
                snippet[:SNIPPET_CHARS],
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


def _operation_spans(text: str) -> dict[tuple[str, str], str]:
    """(path, method) -> the source text of that operation, read from the YAML node positions."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    paths = _child(root, "paths") if root is not None else None
    if not isinstance(paths, yaml.MappingNode):
        return {}
    out: dict[tuple[str, str], str] = {}
    for path_key, operations in paths.value:
        if not isinstance(operations, yaml.MappingNode):
            continue
        head = _line_of(text, path_key.start_mark.index)
        for key, value in operations.value:
            if key.value in HTTP_METHODS:
                start = text.rfind("\n", 0, key.start_mark.index) + 1
                body = text[start : value.end_mark.index].rstrip()
                out[(str(path_key.value), str(key.value))] = f"{head}\n{body}"
    return out


def _child(node: yaml.Node, name: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if k.value == name), None)
    return None


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)].rstrip()


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


def _openapi_text(text: str, source: str) -> list[Chunk]:
    return parse_openapi(text, source) if re.search(r'"?openapi"?\s*:', text) else []


PARSERS: dict[str, tuple[str, FenceParser]] = {
    ".yaml": ("yaml", _openapi_text),
    ".yml": ("yaml", _openapi_text),
    ".json": ("json", _openapi_text),
    ".prisma": ("prisma", parse_prisma),
    ".sql": ("sql", parse_sql),
    ".py": ("python", parse_python),
    ".ts": ("typescript", parse_zod),
    ".js": ("javascript", parse_zod),
}
"""File suffix -> (language, parser); a PRD's fenced blocks use the same ones by their info string."""
FENCES: dict[str, FenceParser] = {
    **{lang: parser for lang, parser in PARSERS.values()},
    "yml": _openapi_text,
    "ts": parse_zod,
    "js": parse_zod,
    "py": parse_python,
    "postgresql": parse_sql,
}


def _parse(path: Path, root: Path) -> list[Chunk]:
    text = path.read_text(encoding="utf-8", errors="replace")
    source = str(path.relative_to(root))
    suffix = path.suffix.lower()
    if suffix == ".md":
        return parse_prd(text, source, FENCES)
    if suffix not in PARSERS:
        return []
    language, parser = PARSERS[suffix]
    chunks = parser(text, source)
    for c in chunks:
        c.data.setdefault("language", language)
    return chunks


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


CHUNKER_VERSION = "2"
"""Part of the content hash: an index chunked by an older chunker is rebuilt on the next index."""


def content_hash(files: Iterable[Path]) -> str:
    """One hash over the chunker's version and every file's path and bytes (unchanged docs chunked by
    this chunker need no re-index)."""
    digest = hashlib.sha256(CHUNKER_VERSION.encode())
    for f in files:
        digest.update(str(f).encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


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
