"""The CLI's stdout carries only the command's output: a background job that logs while
`orrery chat --once --json` runs writes to stderr, and stdout still parses as JSON (issue 51)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from orrery.config import get_settings
from tests.support.cli import cli_environment

runner = CliRunner()


@pytest.fixture
def demo_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for _ in cli_environment(db_url, monkeypatch):
        assert runner.invoke(app, ["demo", "load"]).exit_code == 0
        yield


@pytest.mark.demo_db
def test_json_output_parses_while_a_background_job_logs(
    demo_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORRERY_LOG_LEVEL", "info")  # the job's "done" line is logged
    monkeypatch.setenv("ORRERY_PATTERN_REFRESH_MINUTES", "0.001")  # the summary refresh is due
    get_settings.cache_clear()
    once = runner.invoke(app, ["chat", "--demo", "--once", "What plan does this task belong to?", "--json"])
    assert once.exit_code == 0, once.output
    assert "(refresh_user_summary) done" in once.stderr  # the job ran during the command, logged
    assert json.loads(once.stdout)["reply"]  # stdout is the JSON document alone
    assert "orrery.jobs" not in once.stdout


@pytest.mark.demo_db
def test_the_cli_shows_warnings_only_unless_a_level_is_set(
    demo_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORRERY_PATTERN_REFRESH_MINUTES", "0.001")
    get_settings.cache_clear()
    once = runner.invoke(app, ["chat", "--demo", "--once", "Hi", "--json"])
    assert once.exit_code == 0, once.output
    assert "INFO" not in once.stderr and json.loads(once.stdout)["reply"]
