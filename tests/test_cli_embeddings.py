"""`orrery embeddings status|reembed` through the installed console script (a process per command, as
a user runs it), against a fake OpenAI-compatible embeddings server on loopback.

Each command is forked from the test process's launcher, which has imported litellm once
(`tests/support/entrypoint.py`): as a cold process every step paid litellm's ~5 s import (about 60
CPU-s for this test)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orrery.db.engine import Database
from orrery.memory.messages import append_message
from orrery.repo import chat
from tests.support.entrypoint import Commands, server_launcher
from tests.support.factories import make_user
from tests.support.fake_embeddings import FakeEmbeddings, fake_embeddings_server

MODEL = "openai/fake-embed"
MINILM = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[FakeEmbeddings, str]]:
    with fake_embeddings_server() as running:
        yield running


async def _conversations(db: Database) -> str:
    """Two users' sessions written with the default (local) model; returns the first user's email."""
    emails = []
    for texts in (["Where is the launch plan?", "In the Atlas folder.", "Thanks."], ["Hi", "Hello!"]):
        async with db.transaction() as s:
            user = await make_user(s)
            c = await chat.create_session(s, user.id)
            for i, text in enumerate(texts):
                new = chat.NewMessage("user" if i % 2 == 0 else "assistant", text)
                await append_message(s, user.id, c.id, new)
            emails.append(user.email)
    return emails[0]


def _cli(cli: Commands, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    return cli.run(["embeddings", *args], env=env)


def _json(cli: Commands, *args: str, env: dict[str, str] | None = None) -> Any:
    code, output = _cli(cli, *args, "--json", env=env)
    assert code == 0, output
    return json.loads(output[output.index("{") :])


# one dialect here: each step is a process start; both dialects' queries run in-process in
# tests/memory/test_remote_embeddings.py
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_status_and_reembed_through_the_entry_point(
    db: Database, db_url: str, server: tuple[FakeEmbeddings, str], tmp_path: Path
) -> None:
    fake, base = server
    fake.reset()
    ada = await _conversations(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL"))}
    env |= {
        "DATABASE_URL": db_url,
        "ORRERY_SECRET_KEY": "cli-secret",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ORRERY_EMBEDDING_MODEL": MODEL,
        "ORRERY_EMBEDDING_API_BASE": base,
        "ORRERY_EMBEDDING_API_KEY": "sk-test",
    }
    _steps(Commands(server_launcher(), env, tmp_path), fake, ada)


def _steps(cli: Commands, fake: FakeEmbeddings, ada: str) -> None:
    status = _json(cli, "status")
    assert (status["model"], status["remote"], status["messages"], status["current"]) == (MODEL, True, 5, 0)
    assert status["missing"] == 0 and status["other_models"] == {MINILM: 5}
    assert _json(cli, "status", "--user", ada)["other_models"] == {MINILM: 3}

    assert _json(cli, "reembed", "--user", ada, "--batch-size", "2")["stored"] == 3
    code, output = _cli(cli, "status")
    assert code == 0 and f"with a {MODEL} vector: 3" in output and f"({MINILM}): 2" in output

    fake.mode = "down"
    code, output = _cli(cli, "reembed")
    assert code == 1 and "error:" in output and "run it again" in output
    assert _json(cli, "status")["current"] == 3  # nothing lost
    fake.mode = "ok"
    assert _json(cli, "reembed")["stored"] == 2
    assert _json(cli, "reembed")["stored"] == 0  # idempotent
    assert _json(cli, "reembed", "--all")["stored"] == 5  # every vector again, none of another model

    # switching back: the local model's vectors are gone
    status = _json(cli, "status", env={"ORRERY_EMBEDDING_MODEL": "local"})
    assert (status["model"], status["current"], status["other_models"]) == (MINILM, 0, {MODEL: 5})
