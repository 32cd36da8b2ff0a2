"""`orrery embeddings status|reembed` through the installed console script (a subprocess, as a user
runs it), against a fake OpenAI-compatible embeddings server on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.db.engine import Database
from backend.memory.messages import append_message
from backend.repo import chat
from tests.support.factories import make_user
from tests.support.fake_embeddings import FakeEmbeddings, fake_embeddings_server

ORRERY = str(Path(sys.executable).with_name("orrery"))
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


def _cli(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [ORRERY, "embeddings", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180
    )
    return done.returncode, done.stdout + done.stderr


def _json(env: dict[str, str], cwd: Path, *args: str) -> Any:
    code, output = _cli(env, cwd, *args, "--json")
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
    env.update(
        DATABASE_URL=db_url,
        ORRERY_SECRET_KEY="cli-secret",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        ORRERY_EMBEDDING_MODEL=MODEL,
        ORRERY_EMBEDDING_API_BASE=base,
        ORRERY_EMBEDDING_API_KEY="sk-test",
    )
    status = _json(env, tmp_path, "status")
    assert (status["model"], status["remote"], status["messages"], status["current"]) == (MODEL, True, 5, 0)
    assert status["missing"] == 0 and status["other_models"] == {MINILM: 5}
    assert _json(env, tmp_path, "status", "--user", ada)["other_models"] == {MINILM: 3}

    assert _json(env, tmp_path, "reembed", "--user", ada, "--batch-size", "2")["stored"] == 3
    code, output = _cli(env, tmp_path, "status")
    assert code == 0 and f"with a {MODEL} vector: 3" in output and f"({MINILM}): 2" in output

    fake.mode = "down"
    code, output = _cli(env, tmp_path, "reembed")
    assert code == 1 and "error:" in output and "run it again" in output
    assert _json(env, tmp_path, "status")["current"] == 3  # nothing lost
    fake.mode = "ok"
    assert _json(env, tmp_path, "reembed")["stored"] == 2
    assert _json(env, tmp_path, "reembed")["stored"] == 0  # idempotent
    assert (
        _json(env, tmp_path, "reembed", "--all")["stored"] == 5
    )  # every vector again, none of another model

    env["ORRERY_EMBEDDING_MODEL"] = "local"  # switching back: the local model's vectors are gone
    status = _json(env, tmp_path, "status")
    assert (status["model"], status["current"], status["other_models"]) == (MINILM, 0, {MODEL: 5})
