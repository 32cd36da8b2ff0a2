"""`orrery chat` in the terminal: `/focus` and `--focus` take a name (issue 43: a raw UUID was the only
way), and a chat started from the terminal takes its title from its first message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from tests.support.cli import cli_environment

runner = CliRunner()


@pytest.fixture
def demo_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for _ in cli_environment(db_url, monkeypatch):
        assert runner.invoke(app, ["demo", "load"]).exit_code == 0
        yield


def _session(session_id: str) -> dict[str, object]:
    result = runner.invoke(app, ["sessions", "list", "--user", "maya@demo.orrery.dev", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    rows = listed["sessions"] if isinstance(listed, dict) else listed
    return next(r for r in rows if r["id"] == session_id)


@pytest.mark.demo_db
def test_focus_by_name_and_titles_from_the_first_message(demo_env: None) -> None:
    once = runner.invoke(app, ["chat", "--demo", "--once", "What plan does this task belong to?", "--json"])
    assert once.exit_code == 0, once.output
    sid = json.loads(once.stdout)["session_id"]
    assert _session(sid)["title"] == "What plan does this task belong to?"
    again = runner.invoke(app, ["chat", "--once", "And then?", "--session", sid, "--json"])
    assert again.exit_code == 0 and _session(sid)["title"] == "What plan does this task belong to?"

    script = "/focus launch marketing\n/focus legal\n/focus task:nothing like this\n/focus pricing\n/quit\n"
    chat = runner.invoke(app, ["chat", "--session", sid], input=script)
    assert chat.exit_code == 0, chat.output
    out = " ".join(chat.output.split())
    assert "focus: plan Launch marketing" in out
    assert "focus: task Legal review of pricing terms" in out
    assert "nothing in this project is named like “nothing like this”" in out
    assert "“pricing” names" in out and "Say which, e.g. /focus" in out  # several: listed, none chosen
    assert _session(sid)["focus"]["kind"] == "task"  # type: ignore[index]

    named = runner.invoke(
        app, ["chat", "--demo", "--focus", "plan:Launch marketing", "--once", "Hi", "--json"]
    )
    assert named.exit_code == 0, named.output
    assert _session(json.loads(named.stdout)["session_id"])["focus"]["kind"] == "plan"  # type: ignore[index]


@pytest.mark.demo_db
def test_a_session_is_continued_only_as_its_owner(demo_env: None) -> None:
    """`--user` with `--session` (issue 51): another person's session is refused, nothing written."""
    once = runner.invoke(app, ["chat", "--demo", "--once", "Hello", "--json"])
    sid = json.loads(once.stdout)["session_id"]
    assert runner.invoke(app, ["users", "create", "eve@example.com", "--name", "Eve"]).exit_code == 0
    refused = runner.invoke(app, ["chat", "--session", sid, "--user", "eve@example.com", "--once", "Hi"])
    assert refused.exit_code == 1
    said = " ".join(refused.stderr.split())
    assert f"session {sid} is not eve@example.com's: leave out --user" in said
    assert "Traceback" not in refused.output
    assert _session(sid)["message_count"] == 2  # the first turn only: nothing written as Eve
    owner = runner.invoke(app, ["chat", "--session", sid, "--user", "maya@demo.orrery.dev", "--once", "Hi"])
    assert owner.exit_code == 0, owner.output  # the owner named: as before
