"""The `orrery` CLI in-process, as its tests drive it: pointed at one test database, and run with
what a terminal (or, with `--json`, a script) would read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from orrery.config import get_settings

runner = CliRunner()


def cli_environment(url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's settings read from `url` (a fixture's body: `yield from cli_environment(...)`)."""
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", "cli-secret")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def invoke(*args: str) -> tuple[int, str]:
    """The exit code and what a terminal shows; with `--json`, stdout alone (what a script parses:
    log lines go to stderr)."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout if "--json" in args else result.output
