"""The README's sample receipt is what `orrery context show` prints for the README's own steps
(issue 43: it had drifted from the real output). Each row's section, tokens, budget and included
count are compared (tokens within a margin); regenerate the block from a real run
(`COLUMNS=100 orrery context show --session <id>`) when they change."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from tests.support.cli import cli_environment

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def demo_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COLUMNS", "100")
    yield from cli_environment(db_url, monkeypatch)


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _rows(text: str) -> tuple[str, list[list[str]]]:
    """The receipt's header line and its section rows (name, tokens, budget, included)."""
    header = re.search(r"^receipt · .*$", text, re.M)
    assert header, text
    rows = [
        [cell.strip() for cell in line.split("│")[1:5]]
        for line in text[header.end() :].splitlines()
        if line.startswith("│") and line.split("│")[1].strip()
    ]
    return header.group(0).strip(), rows


@pytest.mark.demo_db
def test_the_readme_receipt_is_the_real_output(demo_env: None) -> None:
    readme = (ROOT / "README.md").read_text()
    steps = readme[readme.index("orrery demo load --json") :]
    asked = re.search(r'orrery chat --session <id> --once "([^"]+)"', steps)
    assert asked, "the README's steps changed: update this test with them"
    ids = json.loads(_run("demo", "load", "--json"))
    create = re.search(r"orrery sessions create (.*?)\s+# prints", steps, re.S)
    assert create
    args = create.group(1).replace("\\\n", " ").replace("<project_id>", ids["project_id"])
    sid = _run("sessions", "create", *args.replace("<task_id>", ids["focus"]["task"]).split()).strip()
    _run("chat", "--session", sid, "--once", asked.group(1))
    real = _run("context", "show", "--session", sid)
    sample = readme[readme.index("```\nreceipt · ") :]
    (shown_head, shown), (ran_head, ran) = _rows(sample.split("\n```", 1)[0]), _rows(real)
    # names, budgets and counts exactly; tokens within 10% (dates relative to today, ids and the
    # database's order of equal matches move a few tokens from run to run)
    assert [(r[0], r[2], r[3]) for r in shown] == [(r[0], r[2], r[3]) for r in ran], ran
    assert all(
        abs(int(a[1]) - int(b[1])) <= max(3, int(b[1]) // 10) for a, b in zip(shown, ran, strict=True)
    ), ran
    total = [int(re.findall(r"\d+", h)[0]) for h in (shown_head, ran_head)]
    assert abs(total[0] - total[1]) <= total[1] // 20, (shown_head, ran_head)
