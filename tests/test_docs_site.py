"""The docs site and the README keep their promises: the configuration page names every setting (and
so does `.env.example`), the README stays a short front page whose links all land, and the strategy
docs say what `ctx.history` holds."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from orrery.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_table", DOCS / "hooks" / "config_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_setting_is_in_env_example_and_on_the_configuration_page() -> None:
    hook = _hook()
    variables = [hook.env_name(name, field) for name, field in Settings.model_fields.items()]
    example = (ROOT / ".env.example").read_text()
    in_example = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, re.M))
    assert not [v for v in variables if v not in in_example], "missing from .env.example"
    table = hook.settings_table()
    assert not [v for v in variables if f"| `{v}` |" not in table], "missing from the generated table"
    assert not [row for row in hook.settings_rows() if not row[2]], "a setting has no docstring"
    assert hook.MARKER in (DOCS / hook.PAGE).read_text()


def test_the_readme_is_a_short_front_page_whose_links_land() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 400
    assert "docs/screenshots/chat-and-inspector.png" in text
    assert "make run" in text and "make test" in text
    links = re.findall(r"\]\(((?:docs/)[^)#]+)", text)
    assert len(links) >= 25
    assert not [link for link in links if not (ROOT / link).exists()], "README links to missing pages"


def test_the_strategy_docs_say_history_includes_the_current_message() -> None:
    page = (DOCS / "extending" / "strategies.md").read_text()
    assert "`ctx.history` **includes the current user message**" in page


def test_the_site_works_offline_beside_the_server_and_the_lock_file_is_ignored() -> None:
    from fnmatch import fnmatch

    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))
    assert config["theme"]["font"] is False  # no Google Fonts request (offline)
    assert config["dev_addr"] == "127.0.0.1:8001"  # `orrery serve` has 8000
    patterns = (ROOT / ".gitignore").read_text().split()
    assert any(fnmatch("orrery.db.server.lock", p) for p in patterns), "the server lock is not ignored"
    clean = re.search(r"^clean:.*\n\trm -rf (.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert clean and "orrery.db.server.lock" in clean.group(1).split()


def test_the_docs_hold_no_pasted_logs_and_name_the_plugin_strategy() -> None:
    logged = [
        f"{page.relative_to(DOCS)}:{n}"
        for page in DOCS.rglob("*.md")
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if re.match(r"(INFO|WARNING|DEBUG):[a-z_.]+:", line)
    ]
    assert logged == [], "log output pasted into the docs"
    strategies = (DOCS / "concepts" / "strategies.md").read_text()
    assert "| `decisions_first` |" in strategies  # the example plugin's strategy, beside the built-ins
    postgresql = (DOCS / "operations" / "postgresql.md").read_text()
    for step in ("CREATE ROLE", "CREATE DATABASE", "DATABASE_URL=postgresql+asyncpg://", "orrery db upgrade"):
        assert step in postgresql.split("## How Orrery uses it")[0], step
    assert "--workers" in postgresql
