"""MkDocs hook: the configuration page's table of settings, generated from `orrery.config.Settings`.

Each row is a field: its environment variable, its default and its docstring (the attribute docstring
under the field in `backend/orrery/config.py`), so the page cannot drift from the code. `.env.example` lists
the same variables; `tests/test_docs_site.py` checks that both name every field.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

MARKER = "<!-- settings-table -->"
PAGE = "configuration.md"


def field_docs() -> dict[str, str]:
    """Each `Settings` field's attribute docstring, one line, by field name."""
    from orrery.config import Settings

    tree = ast.parse(inspect.getsource(Settings))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:], strict=False):
        named = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if named and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[node.target.id] = " ".join(str(after.value.value).split())  # type: ignore[union-attr]
    return docs


def env_name(name: str, field: Any) -> str:
    """The variable a field is read from: its first alias, else `ORRERY_<NAME>`."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return str(choices[0])
    return f"ORRERY_{name.upper()}"


def shown_default(value: Any) -> str:
    """A default as `.env` would spell it."""
    if value is None:
        return "unset"
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    return f"`{value}`"


def settings_rows() -> list[tuple[str, str, str]]:
    """(variable, default, meaning) for every `Settings` field, in the order of `backend/orrery/config.py`."""
    from orrery.config import Settings

    docs = field_docs()
    rows = []
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        meaning = docs.get(name, "").replace("|", "\\|")
        rows.append((env_name(name, field), shown_default(default), meaning))
    return rows


def settings_table() -> str:
    """The Markdown table the configuration page shows."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| `{var}` | {default} | {meaning} |" for var, default, meaning in settings_rows()]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Put the generated table where the configuration page holds the marker."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its {MARKER} marker")
    return markdown.replace(MARKER, settings_table())
