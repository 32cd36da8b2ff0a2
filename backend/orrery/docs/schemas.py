"""DB models from SQL DDL (parsed with sqlglot) and validation schemas from zod declarations.

sqlglot reads `CREATE TABLE` in the common dialects, so types with arguments (`NUMERIC(10,2)`),
constraints and quoting never turn into field names. zod objects are read by balanced brackets, so a
nested `z.object({...})` neither truncates the schema nor hides the fields after it; nested fields
appear as `address.street`.
"""

from __future__ import annotations

import logging
import re

from orrery.docs.chunk import Chunk, model_chunk, schema_chunk

SQL_DIALECTS = (None, "postgres", "mysql", "sqlite", "tsql")
_ZOD_START = re.compile(r"(?:export\s+)?const\s+(\w+)\s*=\s*z\s*\.\s*object\s*\(\s*\{")
_KEY = re.compile(r"^\s*[\"']?([A-Za-z_$][\w$]*)[\"']?\s*\??\s*:\s*(.*)$", re.S)
_NESTED = re.compile(r"^z\s*\.\s*object\s*\(\s*\{")
_OPEN, _CLOSE = "([{", ")]}"


def _tables(text: str, dialect: str | None) -> list[tuple[str, list[str], str]]:
    import sqlglot
    from sqlglot import exp

    found = []
    for statement in sqlglot.parse(text, read=dialect):
        if isinstance(statement, exp.Create) and statement.args.get("kind") == "TABLE":
            schema = statement.this
            if isinstance(schema, exp.Schema) and isinstance(schema.this, exp.Table):
                columns = [c.name for c in schema.expressions if isinstance(c, exp.ColumnDef)]
                found.append((schema.this.name, columns, statement.sql(dialect=dialect, pretty=True)))
    return found


def parse_sql(text: str, source: str) -> list[Chunk]:
    """DB models from SQL `CREATE TABLE` statements, in whichever common dialect reads the most."""
    if not re.search(r"create\s+table", text, re.I):
        return []
    from sqlglot.errors import SqlglotError

    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "falling back to a Command" is how a dialect says no
    best: list[tuple[str, list[str], str]] = []
    try:
        for dialect in SQL_DIALECTS:
            try:
                tables = _tables(text, dialect)
            except SqlglotError:
                continue
            if len(tables) > len(best):
                best = tables
    finally:
        logger.setLevel(level)
    return [
        model_chunk(name, columns, _statement(text, name) or snippet, source)
        for name, columns, snippet in best
    ]


def _statement(text: str, table: str) -> str | None:
    """The `CREATE TABLE` statement for `table` as written in the source (through its `;`), or None."""
    quoted = r"[`\"\[]?"
    start = re.compile(
        rf"create\s+(?:\w+\s+)*?table\s+(?:if\s+not\s+exists\s+)?(?:{quoted}\w+{quoted}\.)?"
        rf"{quoted}{re.escape(table)}{quoted}\s*\(",
        re.I,
    ).search(text)
    if start is None:
        return None
    close = _matching(text, start.end() - 1)
    if close < 0:
        return None
    semicolon = text.find(";", close)
    newline = text.find("\n", close)
    end = semicolon + 1 if semicolon >= 0 and (newline < 0 or semicolon < newline) else close + 1
    return text[start.start() : end]


def _matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (strings and comments skipped), or -1."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                return -1
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _top_level(body: str) -> list[str]:
    """`a: x, b: y({c, d})` split at its own commas only."""
    parts, depth, last, quote = [], 0, 0, ""
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote and body[i - 1] != "\\" else quote
        elif ch in "\"'`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[last:i])
            last = i + 1
    return [*parts, body[last:]]


def _object_fields(body: str, prefix: str = "") -> list[str]:
    fields: list[str] = []
    for part in _top_level(body):
        part = re.sub(r"//[^\n]*", "", part)
        key = _KEY.match(part)
        if not key:
            continue
        name, value = prefix + key.group(1), key.group(2).strip()
        fields.append(name)
        nested = _NESTED.match(value)
        if nested:
            brace = nested.end() - 1
            end = _matching(value, brace)
            if end > 0:
                fields += _object_fields(value[brace + 1 : end], f"{name}.")
    return fields


def parse_zod(text: str, source: str) -> list[Chunk]:
    """Validation schemas from zod `z.object({...})` declarations (nested objects included)."""
    out = []
    for match in _ZOD_START.finditer(text):
        brace = match.end() - 1
        end = _matching(text, brace)
        if end < 0:
            continue
        close = text.find(")", end)
        snippet = text[match.start() : close + 1 if close >= 0 else end + 1]
        fields = _object_fields(text[brace + 1 : end])
        out.append(schema_chunk(match.group(1), fields, snippet, source, "zod"))
    return out
