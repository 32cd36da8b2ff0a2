"""The CLI's memory controls on both databases (in-process; `test_cli_entrypoint.py` runs the same
commands through the installed console script): `sessions create --no-remember`, `sessions update
--remember/--no-remember`, and `memory show` / `memory set` for one person, not another."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.cli import cli_environment, invoke


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from cli_environment(db_url, monkeypatch)


def test_a_chat_is_remembered_or_not_from_the_cli(cli_env: None) -> None:
    assert invoke("users", "create", "ada@example.org", "--name", "Ada")[0] == 0
    assert invoke("users", "create", "eve@example.org", "--name", "Eve")[0] == 0
    code, output = invoke("sessions", "create", "--user", "ada@example.org", "--json")
    assert code == 0 and json.loads(output)["remember"] is True
    code, output = invoke("sessions", "create", "--user", "ada@example.org", "--no-remember", "--json")
    sid = json.loads(output)["id"]
    assert code == 0 and json.loads(output)["remember"] is False

    def listed() -> bool:
        rows = json.loads(invoke("sessions", "list", "--user", "ada@example.org", "--json")[1])
        return bool({r["id"]: r["remember"] for r in rows}[sid])

    assert listed() is False
    code, output = invoke("sessions", "update", "--session", sid, "--remember")
    assert code == 0 and "session remembered" in output and listed() is True
    code, output = invoke(
        "sessions", "update", "--session", sid, "--user", "eve@example.org", "--no-remember"
    )
    assert code == 1 and "not found" in output and listed() is True  # not Eve's
    code, output = invoke(
        "sessions", "update", "--session", sid, "--user", "ada@example.org", "--no-remember"
    )
    assert code == 0 and "not remembered" in output and listed() is False
    assert invoke("sessions", "update", "--session", sid)[0] == 2  # nothing to change
    code, output = invoke("sessions", "update", "--session", "not-a-session", "--remember")
    assert code == 1 and "not found" in output


def test_memory_choices_from_the_cli_are_one_persons(cli_env: None) -> None:
    assert invoke("users", "create", "ada@example.org", "--name", "Ada")[0] == 0
    assert invoke("users", "create", "eve@example.org", "--name", "Eve")[0] == 0
    code, output = invoke("memory", "show", "--user", "ada@example.org")
    assert code == 0 and "recall across chats: on" in output and "recall from other projects: off" in output
    code, output = invoke("memory", "set", "--user", "ada@example.org", "--other-projects", "--json")
    assert code == 0 and json.loads(output) == {"recall_across_chats": True, "recall_other_projects": True}
    code, output = invoke("memory", "set", "--user", "ada@example.org", "--no-recall-across-chats")
    assert code == 0 and "recall across chats: off" in output and "recall from other projects: on" in output
    code, output = invoke("memory", "show", "--user", "eve@example.org", "--json")
    assert json.loads(output) == {"recall_across_chats": True, "recall_other_projects": False}
    code, output = invoke("memory", "set", "--user", "ada@example.org")
    assert code == 2 and "nothing to change" in output
    code, output = invoke("memory", "show", "--user", "nobody@example.org")
    assert code == 1 and "not found" in output


def test_the_timeline_from_the_cli_is_one_persons_and_builds_digests_on_request(cli_env: None) -> None:
    assert invoke("users", "create", "ada@example.org", "--name", "Ada")[0] == 0
    assert invoke("users", "create", "eve@example.org", "--name", "Eve")[0] == 0
    code, output = invoke("sessions", "create", "--user", "ada@example.org", "--title", "Heron", "--json")
    sid = json.loads(output)["id"]
    said = "Plan the Heron kestrel migration for 1,200 users"
    assert invoke("chat", "--session", sid, "--user", "ada@example.org", "--once", said)[0] == 0
    code, output = invoke("memory", "timeline", "--user", "ada@example.org", "--json")
    [row] = json.loads(output)
    assert (
        code == 0 and row["chat_id"] == sid and row["title"] == "Heron" and row["digest"] == ""
    )  # not quiet yet
    code, output = invoke("memory", "timeline", "--user", "ada@example.org", "--build")
    assert code == 0 and output.startswith("- ") and '"Heron": "' in output and "kestrel" in output
    code, output = invoke("memory", "timeline", "--user", "eve@example.org")
    assert code == 0 and "no earlier chats" in output
    code, output = invoke("memory", "timeline", "--user", "eve@example.org", "--project", "nope")
    assert code == 1 and "not found" in output
