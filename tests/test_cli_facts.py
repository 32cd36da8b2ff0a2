"""`orrery facts` (list, add, edit, forget), `orrery sessions delete --forget-facts` and
`orrery eval facts`, through the typer app on a demo-loaded copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import cli_environment, invoke

MAYA = "maya@demo.orrery.dev"


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from cli_environment(db_url, monkeypatch)


@pytest.mark.demo_db
def test_facts_list_add_edit_forget_and_forget_a_chat(cli_env: None) -> None:
    code, porto = invoke("facts", "add", "--user", MAYA, "Sister lives in Porto", "--subject", "sister")
    assert code == 0
    code, lisbon = invoke(
        "facts",
        "add",
        "--user",
        MAYA,
        "Sister moved to Lisbon",
        "--subject",
        "Sister",
        "--valid-from",
        "2026-03-01",
    )
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA)
    assert code == 0 and "Sister moved to Lisbon" in output and "Porto" not in output
    assert "true since 2026-03-01" in output
    code, output = invoke("facts", "list", "--user", MAYA, "--history", "--json")
    rows = {r["id"]: r for r in json.loads(output)}
    assert rows[porto.strip()]["superseded_by"] == lisbon.strip()
    code, _ = invoke(
        "facts", "edit", "--user", MAYA, lisbon.strip(), "--text", "Sister moved to Lisbon in March"
    )
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA, "--json")
    assert [r["text"] for r in json.loads(output)] == ["Sister moved to Lisbon in March"]
    code, output = invoke("facts", "forget", "--user", MAYA, lisbon.strip())
    assert code == 0 and "1 earlier version" in output
    assert "no remembered facts" in invoke("facts", "list", "--user", MAYA, "--history")[1]
    code, output = invoke("facts", "forget", "--user", MAYA, lisbon.strip())
    assert code == 1 and "not found" in output
    code, output = invoke("facts", "add", "--user", MAYA, "x", "--valid-from", "someday")
    assert code == 2 and "not a date" in output
    code, output = invoke("facts", "add", "--user", MAYA, "  ")
    assert code == 1 and "needs some text" in output

    code, sid = invoke("sessions", "create", "--user", MAYA)
    sid = sid.strip()
    code, output = invoke(
        "chat", "--session", sid, "--user", MAYA, "--once", "Remember that my locker code is 4521."
    )
    assert code == 0 and "4521" in output
    code, output = invoke("facts", "list", "--user", MAYA, "--session", sid, "--json")
    listed = json.loads(output)
    assert [r["source"]["session_id"] for r in listed] == [sid] and "4521" in listed[0]["text"]
    code, output = invoke("sessions", "delete", "--session", sid, "--user", MAYA, "--forget-facts")
    assert code == 0 and "with 1 fact(s)" in output
    assert "no remembered facts" in invoke("facts", "list", "--user", MAYA, "--history")[1]


def test_eval_facts_prints_its_score(cli_env: None, tmp_path: Path) -> None:
    probes = {
        "probes": [
            {
                "id": "update",
                "slice": "update",
                "chats": [
                    {"say": ["Remember that my sister lives in Porto."]},
                    {"say": ["Remember that my sister moved to Lisbon."]},
                ],
                "current": ["moved to Lisbon"],
                "not_current": ["Porto"],
            },
            {
                "id": "off",
                "slice": "unremembered",
                "chats": [{"remember": False, "say": ["Remember that my PIN hint is the blue door."]}],
                "gone": ["blue door"],
                "unseen": ["blue door"],
            },
        ]
    }
    path = tmp_path / "probes.json"
    path.write_text(json.dumps(probes))
    code, output = invoke("eval", "facts", "--probes", str(path), "--json")
    assert code == 0, output
    result = json.loads(output)
    assert result["overall"] == {"checks": 4, "passed": 4, "score": 1.0, "probes": 2, "probes_passed": 2}
    assert result["slices"]["update"]["passed"] == 2 and result["failed"] == []
    code, output = invoke("eval", "facts", "--probes", str(path))
    assert code == 0 and "newer fact wins" in output and "100.0%" in output
    code, output = invoke("eval", "facts", "--probes", str(tmp_path / "missing.json"))
    assert code == 1 and "cannot read the probe set" in output


@pytest.mark.demo_db
def test_instructions_by_kind_and_the_capture_eval(cli_env: None) -> None:
    code, made = invoke(
        "facts", "add", "--user", MAYA, "Always cite sources", "--kind", "instruction", "--global"
    )
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA, "--kind", "instruction")
    assert code == 0 and "instruction (every project)" in output and "Always cite sources" in output
    code, output = invoke("facts", "add", "--user", MAYA, "x", "--kind", "rule")
    assert code != 0 and "unknown kind" in output
    code, loaded = invoke("demo", "load", "--json")  # already loaded: its ids
    project = json.loads(loaded)["project_id"]
    code, made = invoke(
        "facts", "add", "--user", MAYA, "I prefer tables", "--kind", "preference", "--project", project
    )
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA, "--kind", "preference", "--json")
    assert [(r["text"], r["project_id"]) for r in json.loads(output)] == [("I prefer tables", project)]
    fid = made.strip()
    code, _ = invoke("facts", "edit", "--user", MAYA, fid, "--kind", "instruction", "--global")
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA, "--kind", "instruction", "--json")
    assert {(r["text"], r["project_id"]) for r in json.loads(output)} >= {("I prefer tables", None)}
    code, _ = invoke("facts", "edit", "--user", MAYA, fid, "--project", project)
    assert code == 0
    code, output = invoke("facts", "list", "--user", MAYA, "--kind", "instruction", "--json")
    assert ("I prefer tables", project) in {(r["text"], r["project_id"]) for r in json.loads(output)}
    code, output = invoke("facts", "edit", "--user", MAYA, fid, "--project", project, "--global")
    assert code != 0 and "not both" in output
    code, output = invoke("eval", "capture", "--json")
    assert code == 0
    result = json.loads(output)
    assert result["sentences"] >= 150 and set(result["kinds"]) == {"instruction", "preference"}
    assert result["overall"]["precision"] >= 0.95
