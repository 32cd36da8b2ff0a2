"""The `orrery` CLI end to end on a fresh database: migrate, demo, summary, users."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from backend.cli import app
from backend.config import get_settings

runner = CliRunner()


@pytest.fixture
def cli_env(empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", "cli-secret")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_fresh_database_flow(cli_env: None) -> None:
    code, output = invoke("demo", "summary")
    assert code == 1 and "orrery db upgrade" in output
    code, output = invoke("db", "current")
    assert code == 1 and "needs `orrery db upgrade`" in output
    assert invoke("db", "upgrade")[0] == 0
    code, output = invoke("db", "current")
    assert code == 0 and "up to date" in output

    code, output = invoke("demo", "load", "--json")
    assert code == 0
    data = json.loads(output)
    assert data["api_key"].startswith("orr_") and set(data["focus"]) == {"task", "plan", "goal", "document"}

    code, output = invoke("demo", "load", "--if-empty")
    assert code == 0 and "demo not loaded" in output
    code, output = invoke("demo", "summary")
    assert code == 0 and "Atlas 2.0 Launch" in output and "Maya Chen" in output


def test_users_and_synth(cli_env: None) -> None:
    assert invoke("db", "upgrade")[0] == 0
    code, output = invoke("users", "create", "Sam@Example.org", "--name", "Sam", "--project", "Thesis")
    assert code == 0 and "API key (shown once): orr_" in output and "Thesis" in output
    code, output = invoke("users", "create", "sam@example.org", "--name", "Sam again")
    assert code == 1 and "already exists" in output
    code, output = invoke("users", "key", "nobody@example.org")
    assert code == 1 and "not found" in output

    code, output = invoke(
        "demo",
        "synth",
        "--entities",
        "200",
        "--edges-per-entity",
        "2",
        "--kb-entries",
        "20",
        "--seed",
        "5",
        "--json",
    )
    first = json.loads(output)
    assert code == 0 and first["entities"] == 200 and first["created"]
    second = json.loads(
        invoke(
            "demo",
            "synth",
            "--entities",
            "200",
            "--edges-per-entity",
            "2",
            "--kb-entries",
            "20",
            "--seed",
            "5",
            "--json",
        )[1]
    )
    assert not second["created"] and second["project_id"] == first["project_id"]
