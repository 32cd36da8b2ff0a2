"""Issue 52 §4, the smaller seed details: a user template's unknown `related.tags` are said in
`metadata.notes` by the CLI too, the seed's `archive` tag leaves out `archived` items, and the tool
door's `index_docs` error without a docs folder reads as written (no stray backslashes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from orrery.db.engine import Database
from orrery.graph.templates import ExcludeSpec
from orrery.repo import identity
from tests.support.cli import cli_environment, invoke


@pytest.fixture
def cli_env(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    (tmp_path / "mine.yaml").write_text(
        "include:\n  related:\n    depth: 1\n    tags: [task, meeting, person]\n"
    )
    monkeypatch.setenv("ORRERY_TEMPLATES_DIR", str(tmp_path))
    yield from cli_environment(db_url, monkeypatch)


@pytest.mark.demo_db
def test_a_user_templates_unknown_related_tags_are_noted_by_the_cli(cli_env: None) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    code, output = invoke("context", "build", demo["focus"]["task"], "--template", "mine", "--json")
    assert code == 0, output
    notes = json.loads(output)["metadata"]["notes"]
    assert notes and "meeting, person" in notes[0] and "ignored" in notes[0]


def test_the_archive_tag_leaves_out_archived_items() -> None:
    spec = ExcludeSpec.model_validate({"tags": ["archive", "draft"]})
    assert spec.excludes_state("archived") and spec.excludes_state("archive")
    assert spec.excludes_state("drafted") and not spec.excludes_state("active")
    assert not spec.excludes_state(None) and not ExcludeSpec().excludes_state("archived")


async def test_index_docs_without_a_folder_says_what_to_run_as_written(
    api: httpx.AsyncClient, db: Database, demo: Any
) -> None:
    async with db.transaction() as s:
        project = (await identity.create_project(s, demo.user_id, "No docs")).id
    got = await api.post("/v1/tools/index_docs", json={"arguments": {}, "project_id": str(project)})
    text = got.text
    assert "ORRERY_DOCS_DIR" in text and f"`orrery docs index PATH --project {project}`" in text, text
    assert "\\\\" not in text and "\\`" not in text, text
